// JSON Pointers (RFC 6901): where in a message a finding or an edit points.

/** A JSON Pointer (RFC 6901) from path segments. */
export function pointer(...segments: Array<string | number>): string {
  return segments.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/** One segment of a JSON Pointer, unescaped. */
export const unescapeSegment = (segment: string): string => segment.replace(/~1/g, '/').replace(/~0/g, '~');
