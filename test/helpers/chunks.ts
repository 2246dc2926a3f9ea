// Cutting a byte stream into chunks and running a splitter over them, for the SSE splitter tests.

/** `input` cut at `points` (offsets, ascending). */
export function cut(input: Buffer, points: number[]): Buffer[] {
  const edges = [0, ...points, input.length];
  return edges.slice(1).map((end, k) => input.subarray(edges[k], end));
}

/** Every piece a splitter returns for `chunks`, its end included. */
export const splitAll = <P>(s: { push(chunk: Uint8Array): P[]; end(): P[] }, chunks: Uint8Array[]): P[] => [
  ...chunks.flatMap((c) => s.push(c)),
  ...s.end(),
];
