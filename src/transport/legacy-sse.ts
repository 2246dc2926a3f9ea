// The legacy HTTP+SSE transport of 2024-11-05 (https://modelcontextprotocol.io/specification/2024-11-05/basic/transports#http-with-sse):
// the client opens a GET stream, the server's first event (`endpoint`) names the URL the client
// POSTs its messages to, every POST is only accepted (202) and every answer comes on the stream.
// The proxy learns a session from its endpoint event, rewrites that event so that the client POSTs
// to the proxy (path and query kept, the proxy's origin), and routes the POSTs that name it.
import type { Via } from '../exchange/flow.ts';
import { BoundedMap } from '../exchange/bounded-map.ts';
import { canonicalPath, targetPath } from './target.ts';

/** How the proxy tells the transports apart: learned per stream (auto), or fixed by --transport. */
export type TransportMode = 'auto' | 'sse' | 'streamable-http';

export const TRANSPORT_MODES: readonly TransportMode[] = ['auto', 'sse', 'streamable-http'];

/** A legacy session: what the engine calls it, and where its POSTs go upstream (path and query). */
export interface LegacySession {
  via: Via;
  upstreamTarget: string;
}

/** The query parameters servers name a legacy session by (the TypeScript SDK's, the Python SDK's). */
const SESSION_PARAMS = ['sessionId', 'session_id'];

/**
 * A request target's path and query as they came: one key per session. Not canonicalised (a
 * session id may sit in the path, in any case): a client POSTs the endpoint exactly as it was
 * given, and another spelling finds no session (404), never another session.
 */
const keyOf = (target: string): string => {
  const q = target.indexOf('?');
  return targetPath(target) + (q >= 0 ? target.slice(q) : '');
};

export class LegacySessions {
  /** Open legacy sessions by the key of their message endpoint. */
  private readonly sessions: BoundedMap<string, LegacySession>;
  /** Canonical paths of the message endpoints the upstream named (the newest `maxSessions`: a server may put the session in the path): a POST there is legacy traffic. */
  private readonly paths = new Set<string>();

  constructor(
    readonly mode: TransportMode,
    /** The upstream's endpoint path: under --transport sse, POSTs to it are legacy too. */
    private readonly endpointPath: string,
    private readonly maxSessions: number,
  ) {
    this.sessions = new BoundedMap(maxSessions, Number.POSITIVE_INFINITY, () => {});
  }

  /**
   * An `endpoint` event's data on a stream from `upstream`: the session it opens, and the data
   * the client gets. A relative reference (the SDK's `/message?sessionId=...`) already resolves to
   * the proxy, which serves the same paths: it goes on as it came (rebased, it could name an origin
   * the client does not see, behind TLS termination). An absolute URL on the upstream's origin is
   * rebased onto `publicOrigin`. Undefined when the proxy does not learn legacy sessions
   * (streamable-http), or the URL is on another origin (the client would POST there directly:
   * logged by the caller, relayed as it came).
   */
  learn(data: string, upstream: URL, publicOrigin: string, now: number): { session: LegacySession; data: string } | undefined {
    if (this.mode === 'streamable-http') return undefined;
    let target: URL;
    try {
      target = new URL(data.trim(), upstream);
    } catch {
      return undefined;
    }
    if (target.origin !== upstream.origin) return undefined;
    const upstreamTarget = target.pathname + target.search;
    const key = keyOf(upstreamTarget);
    const named = SESSION_PARAMS.map((p) => target.searchParams.get(p)).find((v) => v !== null);
    const session: LegacySession = { via: { wire: 'sse', session: key, sessionId: named ?? upstreamTarget }, upstreamTarget };
    const path = canonicalPath(target.pathname);
    this.paths.delete(path);
    this.paths.add(path);
    if (this.paths.size > this.maxSessions) this.paths.delete(this.paths.values().next().value!);
    this.sessions.set(key, session, now);
    const absolute = /^[a-z][a-z0-9+.-]*:/i.test(data.trim());
    return { session, data: absolute ? `${publicOrigin}${upstreamTarget}` : data };
  }

  /** Whether a request target is a legacy message endpoint (a POST there is MCP traffic, to judge). */
  isMessagePath(target: string): boolean {
    if (this.paths.size === 0 && this.mode !== 'sse') return false;
    const path = canonicalPath(targetPath(target));
    return this.paths.has(path) || (this.mode === 'sse' && path === canonicalPath(this.endpointPath));
  }

  /**
   * The session a POST names: its session, 'unknown' when it is legacy traffic (a message path,
   * or under --transport sse) but no stream of that session passes through the proxy, or
   * undefined for Streamable HTTP traffic.
   */
  lookup(target: string, now: number): LegacySession | 'unknown' | undefined {
    if (!this.isMessagePath(target)) return undefined;
    const known = this.sessions.get(keyOf(target), now);
    if (known) return known;
    // Learned (auto) on the endpoint's own path: a server that serves Streamable HTTP there too.
    return this.mode === 'auto' && canonicalPath(targetPath(target)) === canonicalPath(this.endpointPath) ? undefined : 'unknown';
  }

  /** The session's stream ended: its POSTs are answered 404 from now on (unless another stream has named the same endpoint since). */
  end(session: LegacySession): void {
    if (this.sessions.peek(session.via.session) === session) this.sessions.delete(session.via.session);
  }
}
