// A peer's own string (a method, tool or client name, a version, a string id) as the proxy writes
// it anywhere (log, span, report): masked for credential shapes and cut to a stated length. Only
// a head is redacted, so a 1 MB name costs what its first kilobytes cost; the head runs a margin
// past the cut, so a credential the cut would split is whole when it is judged.
import { clip } from '../util/clip.ts';
import { redactText } from './text.ts';

/** Past the cut: longer than any credential shape a run may hold (text.ts MAX_KEY_RUN). */
const MARGIN = 1024;

export function peerText(value: string, max: number): string {
  const head = value.length > max + MARGIN ? value.slice(0, max + MARGIN) : value;
  return clip(redactText(head), max, value.length);
}

/** `peerText` for a value that may be absent, or not a string (a numeric id stays as it is). */
export function peerValue<T>(value: T, max: number): T | string {
  return typeof value === 'string' ? peerText(value, max) : value;
}
