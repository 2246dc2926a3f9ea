// Applies decisions to a body: the decided messages take the place of the ones they replace, new
// ones (answers the server never gave) are added, and everything else keeps its bytes.
import type { Decoded } from '../codec/json-body.ts';
import { idKey, idTokenOf, rawTextOf, type Message } from '../codec/jsonrpc.ts';
import { messageText } from './encode.ts';
import type { ResponseMessage } from './types.ts';

export interface BodyChange {
  /** The message of the body this one replaces; undefined adds it. */
  target: Message | undefined;
  message: ResponseMessage;
}

/**
 * The new body, or undefined when nothing changes. A decided message goes out as the proxy built
 * it (with the request's id token, encode.ts withIdToken); every other message of the body goes
 * out as the text it came in, byte for byte (re-encoded only when it was not decoded from text),
 * but those in `drop`.
 */
export function rewriteBody(
  decoded: Decoded | undefined,
  changes: readonly BodyChange[],
  drop: ReadonlySet<Message> = NONE,
): Buffer | undefined {
  if (changes.length === 0) return undefined;
  const messages = decoded?.ok ? decoded.payload.messages.filter((m) => !drop.has(m)) : [];
  const byTarget = new Map(changes.filter((c) => c.target).map((c) => [c.target, c.message]));
  const pieces: string[] = messages.map((m) => {
    const replacement = byTarget.get(m);
    return replacement !== undefined ? messageText(replacement) : (rawTextOf(m) ?? messageText(m.value));
  });
  for (const c of changes) if (!c.target || !messages.includes(c.target)) pieces.push(messageText(c.message));
  const batch = (decoded?.ok === true && decoded.payload.batch) || pieces.length > 1;
  return Buffer.from(batch ? `[${pieces.join(',')}]` : pieces[0]!, 'utf8');
}

const NONE: ReadonlySet<Message> = new Set();
const answerKey = (m: Message): string | undefined =>
  (m.kind === 'result' || m.kind === 'error') && m.id !== null && m.id !== undefined ? idKey(m.id, idTokenOf(m)) : undefined;

/**
 * The answers of a body that no request was waiting for and that repeat the id of an answer the
 * policy replaced (a batch answering one id twice): they go too, or a client that reads the last
 * answer for an id would read the server's unchanged one.
 */
export function repeatsOfChanged(changes: readonly BodyChange[], unmatched: readonly Message[]): ReadonlySet<Message> {
  if (unmatched.length === 0) return NONE;
  const changed = new Set(changes.map((c) => (c.target ? answerKey(c.target) : undefined)).filter((k) => k !== undefined));
  return new Set(unmatched.filter((m) => changed.has(answerKey(m) ?? '')));
}

/** The first message of a body that a rebuilt answer should take the place of: an error whose id is missing or null. */
export function nullIdError(unmatched: readonly Message[]): Message | undefined {
  return unmatched.find((m) => m.kind === 'error' && (m.id === null || m.id === undefined));
}
