// What the proxy knows about each session: the negotiated protocol version, capabilities, and the
// tool catalogue from tools/list. Legacy sessions are keyed by Mcp-Session-Id; traffic without a
// session (the modern era, or a stateless legacy server) shares one entry per credential, because
// a server's tool list may vary by authorization but not by connection.
import type { ClientInfo } from './identity.ts';
import { createHash } from 'node:crypto';
import { KNOWN_BOUNDS } from '../config/defaults.ts';
import { BoundedMap } from './bounded-map.ts';
import { CatalogueStore, type Catalogue, type CatalogueHolder, type Tool } from './catalogues.ts';
import { eraOf, type Era } from '../mcp/versions.ts';

export type { Tool };

export interface Session extends CatalogueHolder {
  key: string;
  /** The Mcp-Session-Id, when the server issued one. */
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  era: Era | undefined;
  serverCapabilities: Record<string, unknown> | undefined;
  clientCapabilities: Record<string, unknown> | undefined;
  /** The client's name and version from initialize (self-reported, for logs). */
  clientInfo?: ClientInfo;
  /** The server's name and version from its initialize result (self-reported: the `server` record, what built it). */
  serverInfo?: ClientInfo;
  /** The tool catalogue: the session's own while tools/list pages arrive, then shared (see catalogues.ts). */
  tools: ReadonlyMap<string, Tool>;
  /** Whether the catalogue holds every page of a tools/list, from the first to one without nextCursor, untruncated. */
  toolsComplete: boolean;
  /** A first page (no cursor) was seen since the catalogue was last reset. */
  toolsFromFirstPage: boolean;
  /** Each tool's field digests in the complete catalogue before the tools/list now being read (what drift compares with; digests only, so no old schema is held). */
  previousTools?: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /** notifications/tools/list_changed came since the last tools/list (then a change is announced). */
  toolsChangeAnnounced?: boolean;
  /** Whether the change a tools/list shows was announced (read by the drift rule). */
  listAnnounced?: boolean;
  /** Paths, hosts and addresses the session made known (rules/known-values.ts), the last KNOWN_BOUNDS.values of them. */
  known?: readonly string[];
  /** The last errors the client answered the server's requests with (this process's only: a fleet does not share them). */
  clientErrors?: readonly ClientError[];
}

/** An error the client answered a request of the server's with, and when (the engine's clock). */
export interface ClientError {
  method: string;
  code: unknown;
  message: unknown;
  at: number;
}

export interface SessionLimits {
  maxSessions: number;
  sessionIdleMs: number;
  maxToolsPerSession: number;
  /** Bytes (JSON text) of all distinct tool catalogues held at once; default 32 MiB. */
  maxCatalogueBytes?: number;
}

/** What the store reports when a catalogue is dropped past the bound. */
export interface CatalogueDropped {
  tools: number;
  bytes: number;
  sessions: number;
}

/** Key of a session: its id, or, without one, a digest of the credential (never the credential). */
export function sessionKey(sessionId: string | undefined, authorization: string | undefined): string {
  if (sessionId) return `sid:${sessionId}`;
  const digest = createHash('sha256')
    .update(authorization ?? '')
    .digest('base64url')
    .slice(0, 16);
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
    catalogue: undefined,
    toolsComplete: false,
    toolsFromFirstPage: false,
  };
}

/** A short digest of each field of a tool definition; a field too deep to serialise reads as such. */
function fieldDigests(tool: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(tool)) {
    let text: string;
    try {
      text = JSON.stringify(value) ?? 'undefined';
    } catch {
      text = '(unreadable)';
    }
    out[key] = createHash('sha1').update(text).digest('base64url').slice(0, 12);
  }
  return out;
}

/** `known` with `values` added (each once, the newest last), the oldest dropped past KNOWN_BOUNDS.values. */
function withKnown(known: readonly string[] = [], values: readonly string[]): readonly string[] {
  const have = new Set(known);
  const fresh = values.filter((v) => !have.has(v));
  if (fresh.length === 0) return known;
  const all = [...known, ...fresh];
  return all.length > KNOWN_BOUNDS.values ? all.slice(all.length - KNOWN_BOUNDS.values) : all;
}

/** The session no longer knows any tools (its catalogue was dropped). */
function forgetTools(session: Session): void {
  session.tools = new Map();
  session.toolsComplete = false;
  session.toolsFromFirstPage = false;
}

/**
 * What a session learns from its traffic (the rare events that change how it is judged). With
 * `--workers`, each one a worker learns is sent to the others, which learn it too: a session whose
 * requests land on different workers is judged as on one.
 */
export type SessionFact =
  | {
      kind: 'initialized';
      key: string;
      sessionId: string | undefined;
      version: string | undefined;
      serverCapabilities: Record<string, unknown> | undefined;
      clientCapabilities: Record<string, unknown> | undefined;
      clientInfo: ClientInfo | undefined;
      serverInfo?: ClientInfo;
    }
  | { kind: 'discovered'; key: string; sessionId: string | undefined; serverCapabilities: Record<string, unknown> | undefined }
  | { kind: 'tools'; key: string; sessionId: string | undefined; tools: unknown; firstPage: boolean; lastPage: boolean }
  | { kind: 'tools-changed'; key: string }
  | { kind: 'known'; key: string; values: string[] }
  | { kind: 'ended'; key: string };

export class SessionStore {
  private readonly sessions: BoundedMap<string, Session>;
  private readonly catalogues: CatalogueStore;
  /** Where the facts learned from this process's own traffic go (the other workers); unset with one process. */
  share: ((fact: SessionFact) => void) | undefined;
  /**
   * With `--workers`: the stored sessions this process's own traffic used since the last
   * takeTouched(), so that the other workers keep them as recent (least recently used goes first,
   * and an idle one expires) as one process would. Undefined with one process: nothing is kept.
   */
  private touched: Set<string> | undefined;

  constructor(
    private readonly limits: SessionLimits,
    onCatalogueDropped: (dropped: CatalogueDropped) => void = () => {},
  ) {
    this.sessions = new BoundedMap(limits.maxSessions, limits.sessionIdleMs, (_key, session) => this.catalogues.release(session));
    this.catalogues = new CatalogueStore(limits.maxCatalogueBytes ?? 32 * 1024 * 1024, (catalogue: Catalogue, holders) => {
      onCatalogueDropped({ tools: catalogue.tools.size, bytes: catalogue.bytes, sessions: holders.size });
      for (const holder of holders) forgetTools(holder as Session);
    });
  }

  /** Distinct tool catalogues held, and their bytes. */
  get catalogueStats(): { catalogues: number; bytes: number } {
    return { catalogues: this.catalogues.size, bytes: this.catalogues.bytes };
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
    const found = this.sessions.get(key, now);
    if (!found) return emptySession(key, sessionId);
    if (this.touched && this.touched.size < this.limits.maxSessions) this.touched.add(key);
    return found;
  }

  /** From now on, remembers which stored sessions this process's traffic uses (see `touched`). */
  trackTouches(): void {
    this.touched ??= new Set();
  }

  /** The sessions used since the last call, and a fresh start. */
  takeTouched(): string[] {
    if (!this.touched || this.touched.size === 0) return [];
    const keys = [...this.touched];
    this.touched.clear();
    return keys;
  }

  /** Another worker used these sessions: they are as recent here (a session not stored here stays unknown). */
  touch(keys: readonly string[], now: number): void {
    for (const key of keys) this.sessions.get(key, now);
  }

  /** Remembers a session the server has answered on (it issued or accepted its id). */
  keep(session: Session, now: number): void {
    if (this.sessions.peek(session.key) !== session) this.sessions.set(session.key, session, now);
  }

  /** The keys of the stored sessions. */
  keys(): string[] {
    return [...this.sessions.keys()];
  }

  find(key: string, now: number): Session | undefined {
    return this.sessions.get(key, now);
  }

  /**
   * What this process knows of a stored session as the facts that teach it (its catalogue
   * aside: only the server's own pages say it exactly): for a store that lost them. Does not
   * touch the session's recency.
   */
  factsOf(key: string): SessionFact[] {
    const s = this.sessions.peek(key);
    if (!s) return [];
    const facts: SessionFact[] = [];
    if (s.era === 'modern') facts.push({ kind: 'discovered', key, sessionId: s.sessionId, serverCapabilities: s.serverCapabilities });
    else if (s.protocolVersion !== undefined || s.serverCapabilities !== undefined)
      facts.push({
        kind: 'initialized',
        key,
        sessionId: s.sessionId,
        version: s.protocolVersion,
        serverCapabilities: s.serverCapabilities,
        clientCapabilities: s.clientCapabilities,
        clientInfo: s.clientInfo,
      });
    if (s.toolsChangeAnnounced) facts.push({ kind: 'tools-changed', key });
    if (s.known && s.known.length > 0) facts.push({ kind: 'known', key, values: [...s.known] });
    return facts;
  }

  end(key: string): void {
    this.learn({ kind: 'ended', key }, 0);
  }

  /**
   * Learns a fact, and shares it unless it came from another worker (`fromPeer`). `session`: the
   * object this process's own traffic holds (it may not be stored yet); a peer's fact finds or
   * opens the session by its key. One path for both, so that every worker knows the same.
   */
  learn(fact: SessionFact, now: number, session?: Session, fromPeer = false): void {
    switch (fact.kind) {
      case 'initialized': {
        const s = session ?? this.open(fact.key, fact.sessionId, now);
        this.keep(s, now);
        if (fact.version !== undefined) this.setVersion(s, fact.version);
        s.serverCapabilities = fact.serverCapabilities;
        s.clientCapabilities = fact.clientCapabilities;
        s.clientInfo = fact.clientInfo;
        s.serverInfo = fact.serverInfo;
        break;
      }
      case 'discovered': {
        const s = session ?? this.open(fact.key, fact.sessionId, now);
        this.keep(s, now);
        s.serverCapabilities = fact.serverCapabilities;
        break;
      }
      case 'tools': {
        const s = session ?? this.open(fact.key, fact.sessionId, now);
        this.keep(s, now);
        this.addTools(s, fact.tools, fact.firstPage, fact.lastPage);
        break;
      }
      case 'tools-changed': {
        // A changed tool list makes the catalogue stale (the session is not stored for it).
        const s = session ?? this.sessions.peek(fact.key);
        if (!s) break;
        s.toolsComplete = false;
        s.toolsFromFirstPage = false;
        s.toolsChangeAnnounced = true;
        break;
      }
      case 'known': {
        // Never stores a session: only one the server answered on (or this exchange's own) learns.
        const s = session ?? this.sessions.peek(fact.key);
        if (s) s.known = withKnown(s.known, fact.values);
        break;
      }
      case 'ended': {
        const s = this.sessions.delete(fact.key);
        if (s) this.catalogues.release(s);
        break;
      }
    }
    if (!fromPeer) this.share?.(fact);
  }

  sweep(now: number): void {
    this.sessions.sweep(now);
  }

  setVersion(session: Session, version: string): void {
    session.protocolVersion = version;
    session.era = eraOf(version);
  }

  /**
   * Records one tools/list page; the first page (no cursor) starts a new catalogue. Once the last
   * page is in, the catalogue is shared with every session that lists the same tools.
   */
  addTools(session: Session, tools: unknown, firstPage: boolean, lastPage: boolean): void {
    // What this list replaces, for the drift rule: only a complete catalogue says what changed.
    if (firstPage) {
      session.previousTools = session.toolsComplete
        ? new Map([...session.tools].map(([name, tool]) => [name, tool.fields ?? {}]))
        : undefined;
      session.listAnnounced = session.toolsChangeAnnounced === true;
      session.toolsChangeAnnounced = false;
    }
    // A shared map is never edited: the session gets its own to fill.
    this.catalogues.release(session);
    const own = new Map(firstPage ? [] : session.tools);
    session.tools = own;
    if (firstPage) session.toolsFromFirstPage = true;
    session.toolsComplete = lastPage && session.toolsFromFirstPage;
    if (Array.isArray(tools)) {
      for (const tool of tools) {
        if (own.size >= this.limits.maxToolsPerSession) {
          // A truncated catalogue cannot say that a tool does not exist.
          session.toolsComplete = false;
          break;
        }
        if (typeof tool === 'object' && tool !== null && typeof (tool as { name?: unknown }).name === 'string') {
          const { name, inputSchema, outputSchema, title, description } = tool as {
            name: string;
            inputSchema?: unknown;
            outputSchema?: unknown;
            title?: unknown;
            description?: unknown;
          };
          own.set(name, {
            name,
            inputSchema,
            outputSchema,
            title: typeof title === 'string' ? title : undefined,
            description: typeof description === 'string' ? description : undefined,
            fields: fieldDigests(tool as Record<string, unknown>),
          });
        }
      }
    }
    if (lastPage) session.tools = this.catalogues.share(own, session)?.tools ?? own;
  }
}
