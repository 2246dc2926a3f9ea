// Cutting a peer's string to a stated length before the proxy keeps it (a report ring, a span):
// a 1 MB tool name must not become 1 MB held per exchange.

/**
 * `value` when at most `max` characters, else a copy of its first `max` followed by a marker
 * saying how long it was. A copy: V8's slice of a long string points into it, and would keep the
 * whole of it alive for as long as the cut one is kept. `length`: how long the original was, when
 * `value` is already a head of it.
 */
export function clip(value: string, max: number, length = value.length): string {
  if (value.length <= max && length <= max) return value;
  const head = Buffer.from(value.slice(0, max), 'utf16le').toString('utf16le');
  return `${head}…[${length} chars]`;
}

/** `clip` for a value that may be absent. */
export function clipOptional<T extends string | null | undefined>(value: T, max: number): T {
  return (typeof value === 'string' ? clip(value, max) : value) as T;
}
