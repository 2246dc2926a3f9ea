// Applies decisions to a body: the decided messages take the place of the ones they replace, new
// ones (answers the server never gave) are added, and everything else keeps its value.
import type { Decoded } from '../codec/json-body.ts';
import type { Message } from '../codec/jsonrpc.ts';
import { encodeBody } from './encode.ts';
import type { ResponseMessage } from './types.ts';

export interface BodyChange {
  /** The message of the body this one replaces; undefined adds it. */
  target: Message | undefined;
  message: ResponseMessage;
}

/** The new body, or undefined when nothing changes. */
export function rewriteBody(decoded: Decoded | undefined, changes: readonly BodyChange[]): Buffer | undefined {
  if (changes.length === 0) return undefined;
  const messages = decoded?.ok ? decoded.payload.messages : [];
  const byTarget = new Map(changes.filter((c) => c.target).map((c) => [c.target, c.message]));
  const values: unknown[] = messages.map((m) => byTarget.get(m) ?? m.value);
  for (const c of changes) if (!c.target || !messages.includes(c.target)) values.push(c.message);
  const batch = (decoded?.ok === true && decoded.payload.batch) || values.length > 1;
  return encodeBody(values, batch);
}

/** The first message of a body that a rebuilt answer should take the place of: an error whose id is missing or null. */
export function nullIdError(unmatched: readonly Message[]): Message | undefined {
  return unmatched.find((m) => m.kind === 'error' && (m.id === null || m.id === undefined));
}
