// What the proxy knows about each session: the negotiated protocol version, capabilities, and the
// tool catalogue from tools/list. Legacy sessions are keyed by Mcp-Session-Id; traffic without a
// session (the modern era, or a stateless legacy server) shares one entry per credential, because
// a server's tool list may vary by authorization but not by connection.
import { createHash } from 'node:crypto';
import { BoundedMap } from './bounded-map.ts';
import { eraOf, type Era } from '../mcp/versions.ts';

export interface Tool {
  name: string;
  inputSchema: unknown;
}

export interface Session {
  key: string;
  /** The Mcp-Session-Id, when the server issued one. */
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  era: Era | undefined;
  serverCapabilities: Record<string, unknown> | undefined;
  clientCapabilities: Record<string, unknown> | undefined;
  tools: Map<string, Tool>;
  /** Whether the catalogue holds every page of a tools/list, from the first to one without nextCursor, untruncated. */
  toolsComplete: boolean;
  /** A first page (no cursor) was seen since the catalogue was last reset. */
  toolsFromFirstPage: boolean;
}

export interface SessionLimits {
  maxSessions: number;
  sessionIdleMs: number;
  maxToolsPerSession: number;
}

/** Key of a session: its id, or, without one, a digest of the credential (never the credential). */
export function sessionKey(sessionId: string | undefined, authorization: string | undefined): string {
  if (sessionId) return `sid:${sessionId}`;
  const digest = createHash('sha256').update(authorization ?? '').digest('base64url').slice(0, 16);
  return `anon:${digest}`;
}

/** A session the proxy knows nothing about yet. */
export function emptySession(key: string, sessionId: string | undefined): Session {
  return {
    key,
    sessionId,
    protocolVersion: undefined,
    era: undefined,
    serverCapabilities: undefined,
    clientCapabilities: undefined,
    tools: new Map(),
    toolsComplete: false,
    toolsFromFirstPage: false,
  };
}

export class SessionStore {
  private readonly sessions: BoundedMap<string, Session>;

  constructor(private readonly limits: SessionLimits) {
    this.sessions = new BoundedMap(limits.maxSessions, limits.sessionIdleMs);
  }

  get size(): number {
    return this.sessions.size;
  }

  /** The session under key, created empty if new. */
  open(key: string, sessionId: string | undefined, now: number): Session {
    const found = this.sessions.get(key, now);
    if (found) return found;
    const created = emptySession(key, sessionId);
    this.sessions.set(key, created, now);
    return created;
  }

  /**
   * The session a client's request names, if the proxy knows it; else an empty one that is not
   * stored: a session is remembered only once the server answered on it (see keep), so a client
   * cannot fill the store with ids the server never issued.
   */
  lookup(key: string, sessionId: string | undefined, now: number): Session {
    return this.sessions.get(key, now) ?? emptySession(key, sessionId);
  }

  /** Remembers a session the server has answered on (it issued or accepted its id). */
  keep(session: Session, now: number): void {
    if (this.sessions.peek(session.key) !== session) this.sessions.set(session.key, session, now);
  }

  find(key: string, now: number): Session | undefined {
    return this.sessions.get(key, now);
  }

  end(key: string): void {
    this.sessions.delete(key);
  }

  sweep(now: number): void {
    this.sessions.sweep(now);
  }

  setVersion(session: Session, version: string): void {
    session.protocolVersion = version;
    session.era = eraOf(version);
  }

  /** Records one tools/list page; the first page (no cursor) replaces the catalogue. */
  addTools(session: Session, tools: unknown, firstPage: boolean, lastPage: boolean): void {
    if (firstPage) {
      session.tools.clear();
      session.toolsFromFirstPage = true;
    }
    session.toolsComplete = lastPage && session.toolsFromFirstPage;
    if (!Array.isArray(tools)) return;
    for (const tool of tools) {
      if (session.tools.size >= this.limits.maxToolsPerSession) {
        // A truncated catalogue cannot say that a tool does not exist.
        session.toolsComplete = false;
        return;
      }
      if (typeof tool === 'object' && tool !== null && typeof (tool as { name?: unknown }).name === 'string') {
        const { name, inputSchema } = tool as { name: string; inputSchema?: unknown };
        session.tools.set(name, { name, inputSchema });
      }
    }
  }
}
