// Builds the subjects rules judge from what the transport saw. A subject's version is the one whose
// rules judge it (read.ts judgedVersion): the request's own when the spec defines it; for a
// version string nobody defined, the newest version of the era the request was sent in (the
// request itself keeps the string it named: `subject.request.protocolVersion`).
import type { Decoded } from '../codec/json-body.ts';
import type { Message } from '../codec/jsonrpc.ts';
import type { Completed, Flow } from '../exchange/correlate.ts';
import type { OpenRequest } from '../exchange/table.ts';
import { excerpt } from '../redact/excerpt.ts';
import { judgedVersion } from './read.ts';
import type { BodyProblem, ExchangeSubject, ProcessExit } from './types.ts';

/** The HTTP side of a response, as the client received it. */
export interface ResponseHttp {
  status: number | undefined;
  contentType: string | undefined;
  transport: ExchangeSubject['transport'];
  proxyError?: string;
  /** A body relayed unread: why (its exchange record says so). */
  unread?: 'too-large' | 'unknown-coding';
  /** The stdio child ended the exchange by exiting: how, and its last stderr lines. */
  exit?: ProcessExit;
}

export function exchangeSubject(
  c: Completed,
  flow: Flow,
  http: ResponseHttp,
  bodyProblem?: BodyProblem,
  unmatched: readonly Message[] = [],
): ExchangeSubject {
  return {
    kind: 'exchange',
    wire: flow.wire,
    version: judgedVersion(c.request.protocolVersion, [c.request], c.request.headers, flow.session),
    request: c.request,
    requestHeaders: c.request.headers,
    response: c.response,
    outcome: c.outcome,
    status: http.status,
    contentType: http.contentType,
    transport: http.transport,
    proxyError: http.proxyError,
    exit: http.exit,
    bodyProblem,
    unmatched,
    session: flow.session,
  };
}

/** A request not yet answered, for the client's rules (judged before it is forwarded). */
export function pendingSubject(request: OpenRequest, flow: Flow): ExchangeSubject {
  return {
    kind: 'exchange',
    wire: flow.wire,
    version: judgedVersion(request.protocolVersion, [request], request.headers, flow.session),
    request,
    requestHeaders: request.headers,
    response: undefined,
    outcome: 'pending',
    status: undefined,
    contentType: undefined,
    transport: 'none',
    proxyError: undefined,
    bodyProblem: undefined,
    unmatched: [],
    session: flow.session,
  };
}

/** Why a server body answered nothing, if it did not: it did not decode, or held no JSON-RPC message. */
export function bodyProblemOf(decoded: Decoded | undefined, body: Uint8Array | string): BodyProblem | undefined {
  if (!decoded) return undefined;
  // Most bodies are fine: their text is read only for a problem's excerpt.
  const text = () =>
    typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, Math.min(body.byteLength, 512)).toString('utf8');
  if (!decoded.ok) {
    const readable = decoded.problem === 'html' || decoded.problem === 'not-json';
    return { problem: decoded.problem, excerpt: excerpt(text()), ...(readable ? { text: pageText(body) } : {}) };
  }
  if (decoded.payload.messages.every((m) => m.kind === 'invalid')) return { problem: 'not-jsonrpc', excerpt: excerpt(text()) };
  return undefined;
}

/** How much of a page the leak rules read: its first PAGE_BYTES, as at most PAGE_CHARS of text. */
const PAGE_BYTES = 16 * 1024;
const PAGE_CHARS = 4000;
const ENTITIES: Readonly<Record<string, string>> = {
  nbsp: ' ',
  lt: '<',
  gt: '>',
  amp: '&',
  quot: '"',
  '#39': "'",
  '#x27': "'",
  '#47': '/',
  '#x2f': '/',
};

/** A body's head as a person reads it: markup and scripts dropped, the common entities decoded, redacted, bounded. */
export function pageText(body: Uint8Array | string): string {
  const head =
    typeof body === 'string'
      ? body.slice(0, PAGE_BYTES)
      : Buffer.from(body.buffer, body.byteOffset, Math.min(body.byteLength, PAGE_BYTES)).toString('utf8');
  const readable = head
    .replace(/<(script|style)\b[^>]*>[^<]*<\/\1\s*>/gi, ' ')
    .replace(/<[^<>]*>/g, ' ')
    .replace(/&(nbsp|lt|gt|amp|quot|#39|#x27|#47|#x2F);/gi, (_, name: string) => ENTITIES[name.toLowerCase()] ?? ' ');
  return excerpt(readable, PAGE_CHARS);
}
