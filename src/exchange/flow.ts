// Works out where a client's HTTP request belongs: its correlation scope, its session entry, and
// the protocol version to judge it by.
import type { IncomingHttpHeaders } from 'node:http';
import type { Message } from '../codec/jsonrpc.ts';
import { firstValue, H } from '../mcp/headers.ts';
import { declaredVersion, type Flow } from './correlate.ts';
import { sessionKey, type SessionStore } from './sessions.ts';

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => firstValue(headers[name]);

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
): Flow {
  const sessionId = header(headers, H.sessionId);
  const session = sessions.lookup(sessionKey(sessionId, header(headers, 'authorization')), sessionId, now);
  const declared = messages.map(declaredVersion).find((v) => v !== undefined);
  const protocolVersion =
    (sessionId ? session.protocolVersion : undefined) ?? declared ?? header(headers, H.protocolVersion) ?? session.protocolVersion;
  return {
    scope: sessionId ? `sid:${sessionId}` : `x:${exchangeSeq}`,
    requestHeaders: headers,
    session,
    sessionId,
    protocolVersion,
    exchange: bound ? exchangeSeq : undefined,
  };
}
