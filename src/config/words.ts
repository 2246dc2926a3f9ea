// Small pieces of wording shared by the policy's validator and compiler: how a found value is
// named, how a place in the document is written, and the closest allowed value to a typo.

/** A place in the policy document: keys and list indexes, outermost first. */
export type PolicyPath = ReadonlyArray<string | number>;

/** `rules.silent-success.tools[0]`; a key with unusual characters is quoted: `rules["a b"]`. */
export function formatPath(path: PolicyPath): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (/^[\w$-]+$/.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

const MAX_SHOWN = 60;

/** What a value is, for "found ...": `"rewrit"`, `42`, `true`, `a list`, `a mapping`, `an empty value`. */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'an empty value';
  if (typeof value === 'string')
    return value === '' ? 'an empty string' : quote(value.length > MAX_SHOWN ? `${value.slice(0, MAX_SHOWN)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) return value.length === 0 ? 'an empty list' : 'a list';
  if (value instanceof Uint8Array) return 'binary data';
  if (typeof value === 'object') return 'a mapping';
  return typeof value;
}

/** `"text"` as the user wrote it: backslashes stay single (regexes read as written); quotes and control characters are escaped. */
export function quote(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what this escapes
  return `"${text.replace(/"/g, '\\"').replace(/[\x00-\x1f\x7f]/g, (c) => JSON.stringify(c).slice(1, -1))}"`;
}

/** Edit distance (insert, delete, substitute, swap of neighbours), case-insensitive. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const rows: number[][] = [];
  for (let i = 0; i <= s.length; i++) {
    const row: number[] = [i];
    for (let j = 1; j <= t.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const prev = rows[i - 1]!;
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      row.push(d);
    }
    rows.push(row);
  }
  return rows[s.length]![t.length]!;
}

/** Whether one is the start of the other ("warn", "warning"), the shorter at least 3 characters long. */
function abbreviates(a: string, b: string): boolean {
  const [short, long] = a.length <= b.length ? [a.toLowerCase(), b.toLowerCase()] : [b.toLowerCase(), a.toLowerCase()];
  return short.length >= 3 && long.startsWith(short);
}

/** The allowed value closest to `value`, if one is close enough to be a typo (or a short form) of it. */
export function closest(value: string, allowed: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of allowed) {
    const d = editDistance(value, candidate);
    const limit = Math.max(1, Math.floor(Math.max(candidate.length, value.length) / 3));
    if ((d <= limit || abbreviates(value, candidate)) && d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** `; did you mean "rewrite"?`, or nothing when no allowed value is close. */
export function didYouMean(value: unknown, allowed: readonly string[]): string {
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return '';
  const best = closest(String(value), allowed);
  return best === undefined ? '' : `; did you mean "${best}"?`;
}

/** `1 rule setting`, `12 rule settings`. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** `a, b and 3 more` for long lists. */
export function listSome(items: readonly string[], max = 8): string {
  if (items.length <= max) return items.join(', ');
  return `${items.slice(0, max).join(', ')} and ${items.length - max} more`;
}

/** 60000 -> "60s", 300000 -> "5m", 250 -> "250ms" (minutes from 2m up, as people say them). */
export function formatDuration(ms: number): string {
  if (ms >= 120_000 && ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms !== 0 && ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** 4194304 -> "4mib", 1536 -> "1536" (bytes). */
export function formatSize(bytes: number): string {
  if (bytes !== 0 && bytes % 1024 ** 3 === 0) return `${bytes / 1024 ** 3}gib`;
  if (bytes !== 0 && bytes % 1024 ** 2 === 0) return `${bytes / 1024 ** 2}mib`;
  if (bytes !== 0 && bytes % 1024 === 0) return `${bytes / 1024}kib`;
  return String(bytes);
}
