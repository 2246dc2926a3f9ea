/**
 * An integer with its thousands grouped by commas, as `toLocaleString('en-US')` writes it, without
 * its cost: the first call of that loads ICU's number formats (~20 ms), and the rule catalogue
 * formats a count when it loads, at every start.
 */
export function formatCount(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
