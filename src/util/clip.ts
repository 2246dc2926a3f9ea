// Cutting a peer's string to a stated length before the proxy keeps it (a report ring, a span):
// a 1 MB tool name must not become 1 MB held per exchange.

/** `value` when at most `max` characters, else its first `max` followed by a marker saying how long it was. */
export function clip(value: string, max: number): string {
  return value.length <= max ? value : `${value.slice(0, max)}…[${value.length} chars]`;
}

/** `clip` for a value that may be absent. */
export function clipOptional<T extends string | null | undefined>(value: T, max: number): T {
  return (typeof value === 'string' ? clip(value, max) : value) as T;
}
