// Readers of subjects shared by every rule family: header values, the messages of a decoded body,
// status classes, eras, `_meta`, and what answered a client request (with the rule builder that
// judges only such answers). Pure and total: they never throw.
import type { IncomingHttpHeaders } from 'node:http';
import type { Decoded } from '../codec/json-body.ts';
import type { Message } from '../codec/jsonrpc.ts';
import type { Session } from '../exchange/sessions.ts';
import { H, headerOf } from '../mcp/headers.ts';
import { type Era, judgingVersion, META, versionInfo } from '../mcp/versions.ts';
import { asRecord } from '../codec/json-value.ts';
import { excerpt } from '../redact/excerpt.ts';
import { pointer } from '../codec/json-pointer.ts';
import type { ExchangeRule, ExchangeSubject, Report } from './types.ts';
import { ALL } from './versions.ts';

export type ErrorMessage = Extract<Message, { kind: 'error' }>;

export const is2xx = (status: number | undefined): boolean => status !== undefined && status >= 200 && status < 300;

/** Whether an answer came as the JSON-RPC layer's own (a 2xx, or a stdio line, which has no status): not a transport rejection. */
export const inBand = (s: { status: number | undefined; wire?: string }): boolean => s.wire === 'stdio' || is2xx(s.status);

// ---- bodies ----

/** The messages of a decoded body; none when it did not decode. */
export const messagesOf = (d: Decoded | undefined): readonly Message[] => (d?.ok ? d.payload.messages : []);

/** Pointer to message `i` of a body (`/request`, or `/request/2` in a batch), then `rest`. */
export function messagePointer(where: 'request' | 'response', d: Decoded | undefined, i: number, ...rest: Array<string | number>): string {
  return d?.ok && d.payload.batch ? pointer(where, i, ...rest) : pointer(where, ...rest);
}

/** The first message of a body that `match` accepts, with its index. */
export function findMessage<M extends Message>(d: Decoded | undefined, match: (m: Message) => m is M): { m: M; i: number } | undefined {
  const messages = messagesOf(d);
  const i = messages.findIndex(match);
  return i < 0 ? undefined : { m: messages[i] as M, i };
}

/** How findings name a message: a request's or notification's method, else its kind. */
export const nameOf = (m: Message): string => (m.kind === 'request' || m.kind === 'notification' ? m.method : m.kind);

// ---- versions ----

export const isModern = (version: string | undefined): boolean => versionInfo(version)?.era === 'modern';
export const isLegacy = (version: string | undefined): boolean => versionInfo(version)?.era === 'legacy';
/** The version when the spec defines it; undefined for none or an unknown one. */
export const knownVersion = (v: string | undefined): string | undefined => (v !== undefined && ALL.includes(v) ? v : undefined);

/** What a message says about how it was sent: its method (if any) and params. */
export interface SentMessage {
  method?: unknown;
  params?: unknown;
}

/**
 * The era traffic was sent in, read from how it was sent, never from the version string it names:
 * a `_meta` protocolVersion is carried only by 2026-07-28 requests (modern); initialize, an
 * Mcp-Session-Id, or a session that initialize negotiated belong to the legacy handshake; the
 * MCP-Protocol-Version header with none of those is a 2026-07-28 request missing its `_meta`.
 * Undefined when nothing says.
 */
export function sentEra(messages: readonly SentMessage[], headers: IncomingHttpHeaders, session: Session): Era | undefined {
  if (messages.some((m) => metaVersion(m.params) !== undefined)) return 'modern';
  if (
    messages.some((m) => m.method === 'initialize') ||
    headerOf(headers, H.sessionId) !== undefined ||
    session.protocolVersion !== undefined
  )
    return 'legacy';
  return headerOf(headers, H.protocolVersion) !== undefined ? 'modern' : undefined;
}

/**
 * The version whose rules judge traffic that names `version` (the one the flow resolved). A
 * version the spec defines judges itself. A version string nobody defined (a client asking for
 * 2027-01-01) is a fact about the request, never the name of a rule table: such traffic is judged
 * by the rules for unsupported versions of the era it was sent in (see sentEra), i.e. by that era's
 * newest version (mcp/versions.ts judgingVersion), or, in a legacy session whose negotiated
 * version the spec defines, by that version (an initialize negotiates anew: the newest legacy one).
 * No era, no table: undefined, and only the version-free rules judge it.
 */
export function judgedVersion(
  version: string | undefined,
  messages: readonly SentMessage[],
  headers: IncomingHttpHeaders,
  session: Session,
): string | undefined {
  if (version === undefined || knownVersion(version) !== undefined) return version;
  const era = sentEra(messages, headers, session);
  const negotiated = knownVersion(session.protocolVersion);
  if (era === 'legacy' && negotiated !== undefined && isLegacy(negotiated) && !messages.some((m) => m.method === 'initialize'))
    return negotiated;
  return judgingVersion(version, era);
}

// ---- request params ----

export const metaOf = (params: unknown): Record<string, unknown> | undefined => asRecord(asRecord(params)?._meta);

/** The protocol version a request's `_meta` declares: only modern requests carry one. */
export function metaVersion(params: unknown): string | undefined {
  const v = metaOf(params)?.[META.protocolVersion];
  return typeof v === 'string' ? v : undefined;
}

/** The `_meta` keys every modern request must carry (https://modelcontextprotocol.io/specification/2026-07-28/basic/index#meta) that these params lack or hold malformed. */
export function missingMeta(params: unknown): string[] {
  const meta = metaOf(params);
  const missing: string[] = [];
  if (typeof meta?.[META.protocolVersion] !== 'string') missing.push(META.protocolVersion);
  if (!asRecord(meta?.[META.clientCapabilities])) missing.push(META.clientCapabilities);
  return missing;
}

// ---- answers ----

export type Answer<K extends Message['kind']> = Extract<Message, { kind: K }>;

/** What answered a client request, when it is a message of `kind` (and the request was `method`, if given). */
export function answerOf<K extends Message['kind']>(s: ExchangeSubject, kind: K, method?: string): Answer<K> | undefined {
  if (s.request.from !== 'client' || (method !== undefined && s.request.method !== method)) return undefined;
  return s.response?.kind === kind ? (s.response as Answer<K>) : undefined;
}

/** A server rule about what answered a client request: `check` runs only on an answer of `kind` (to `method`, if given). */
export const answerRule = <K extends Message['kind']>(
  kind: K,
  method: string | undefined,
  info: Omit<ExchangeRule, 'subject' | 'check' | 'party'>,
  check: (s: ExchangeSubject, answer: Answer<K>) => Report[],
): ExchangeRule => ({
  ...info,
  party: 'server',
  subject: 'exchange',
  check(s) {
    const answer = answerOf(s, kind, method);
    return answer ? check(s, answer) : [];
  },
});

/** An error code when it is an integer; undefined otherwise (error-shape judges those). */
export const integerCode = (code: unknown): number | undefined => (typeof code === 'number' && Number.isInteger(code) ? code : undefined);

/** An error's message when it is a string, else ''. */
export const errorMessage = (e: ErrorMessage): string => (typeof e.message === 'string' ? e.message : '');

/**
 * A value quoted in a message, short and at any depth: a string as JSON (excerpted), anything else
 * excerpted (JSON.stringify in a message would throw on a value nested thousands of levels deep,
 * and copy a megabyte-long one whole).
 */
export const quoted = (value: unknown, max = 60): string =>
  typeof value === 'string' ? JSON.stringify(excerpt(value, max)) : excerpt(value, max);

/** An error for messages: its code, then its message if it has one: `-32602 "Invalid params"`. */
export const describeError = (e: ErrorMessage): string =>
  `${String(e.code)}${typeof e.message === 'string' ? ` "${excerpt(e.message, 80)}"` : ''}`;
