// Works out where a client's HTTP request belongs: its correlation scope, its session entry, and
// the protocol version to judge it by.
import type { IncomingHttpHeaders } from 'node:http';
import type { Message } from '../codec/jsonrpc.ts';
import { firstValue, H } from '../mcp/headers.ts';
import type { Wire } from '../rules/types.ts';
import { declaredVersion, type Flow } from './correlate.ts';
import { sessionKey, type SessionStore } from './sessions.ts';
import { sessionScope } from './table.ts';

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => firstValue(headers[name]);

/**
 * A session the transport knows a message belongs to, without an Mcp-Session-Id header: a legacy
 * SSE session (its message endpoint) or a stdio child. `sessionId` is what the logs call it.
 */
export interface Via {
  wire: Exclude<Wire, 'streamable-http'>;
  session: string;
  sessionId: string | undefined;
}

/** The session key (and correlation scope) of a session the transport names. */
export const viaKey = (via: Via): string => `via:${via.session}`;

/** The session key of a request over Streamable HTTP: its Mcp-Session-Id, else its credential. */
export const headersKey = (headers: IncomingHttpHeaders): string =>
  sessionKey(header(headers, H.sessionId), header(headers, 'authorization'));

/**
 * Version precedence: a legacy session's negotiated version; else what the message itself
 * declares (modern _meta, initialize's proposal); else the MCP-Protocol-Version header; else what
 * a stateless legacy server negotiated for this credential.
 */
export function resolveFlow(
  headers: IncomingHttpHeaders,
  messages: readonly Message[],
  sessions: SessionStore,
  exchangeSeq: number,
  now: number,
  /** A POST: its response may answer only its own requests. */
  bound = false,
  via?: Via,
): Flow {
  const sessionId = via ? via.sessionId : header(headers, H.sessionId);
  const key = via ? viaKey(via) : headersKey(headers);
  const session = sessions.lookup(key, sessionId, now);
  const declared = messages.map(declaredVersion).find((v) => v !== undefined);
  const known = via !== undefined || sessionId !== undefined;
  const protocolVersion =
    (known ? session.protocolVersion : undefined) ?? declared ?? header(headers, H.protocolVersion) ?? session.protocolVersion;
  return {
    // A session the transport names is the scope its answers come back in, on any stream of it.
    scope: via ? key : sessionId ? sessionScope(sessionId) : `x:${exchangeSeq}`,
    wire: via?.wire,
    requestHeaders: headers,
    session,
    sessionId,
    protocolVersion,
    exchange: bound && !via ? exchangeSeq : undefined,
  };
}
