// The legacy HTTP+SSE transport of 2024-11-05 (https://modelcontextprotocol.io/specification/2024-11-05/basic/transports#http-with-sse):
// the client opens a GET stream, the server's first event (`endpoint`) names the URL the client
// POSTs its messages to, every POST is only accepted (202) and every answer comes on the stream.
// The proxy learns a session from its endpoint event, rewrites that event so that the client POSTs
// to the proxy (path and query kept, the proxy's origin), and routes the POSTs that name it.
import type { ServerResponse } from 'node:http';
import type { FailureDelivery } from '../engine/plans.ts';
import type { Via } from '../exchange/flow.ts';
import type { TransportMode } from '../mcp/transport-modes.ts';
import { proxyErrorBody } from './egress.ts';
import { BoundedMap } from '../exchange/bounded-map.ts';
import { canonicalPath, targetPath } from './target.ts';

/** A legacy session: what the engine calls it, and where its POSTs go upstream (path and query). */
export interface LegacySession {
  via: Via;
  upstreamTarget: string;
  /** Writes messages of the proxy's own as events on the session's stream (set by its relay); false once the stream is gone. */
  deliver?: (texts: readonly string[]) => boolean;
}

/**
 * A legacy POST the proxy answers itself (a block, its own failure, a refusal rewritten): a legacy
 * client reads answers only on the session's stream, so they go there and the POST is accepted
 * (202), as long as the client can tell which request each one answers. A POST the server refused
 * (`refused`: its status, any but 2xx) keeps that status, with the answer in its body: the SDK's
 * client throws on it, as it did on the refusal, where a 202 would tell it the POST went through.
 * So does an answer with `id: null` (a body that did not parse): no client can match it to a
 * request on the stream. Without a stream, the answer goes in the body on a failure status too.
 */
export function answerLegacyPost(
  res: ServerResponse,
  session: LegacySession,
  texts: readonly string[],
  status: number,
  refused?: number,
): void {
  if (refused === undefined && texts.every(answersARequest) && session.deliver?.(texts)) {
    res.writeHead(202, { 'content-type': 'text/plain' }).end('Accepted');
    return;
  }
  const body = texts.length === 1 ? texts[0]! : `[${texts.join(',')}]`;
  const failed = refused ?? (status >= 400 ? status : 502);
  res.writeHead(failed, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}

/** Whether a message the proxy built carries an id a client can match on the stream (not `null`). */
function answersARequest(text: string): boolean {
  const value: unknown = JSON.parse(text);
  return typeof value === 'object' && value !== null && 'id' in value && value.id !== null;
}

/** The messages the client gets when the proxy could not get an answer, one JSON text each. */
export function failureTexts(deliver: Exclude<FailureDelivery, { kind: 'none' }>): string[] {
  if (deliver.kind === 'reply') return messageTexts(deliver.body);
  if (deliver.ids.length === 0) return [proxyErrorBody(deliver.error, [], false)];
  return deliver.ids.map((id) => proxyErrorBody(deliver.error, [id], false));
}

/** A JSON body the engine built, one text per message (a batch is split). */
export function messageTexts(body: Buffer): string[] {
  const text = body.toString('utf8');
  const value: unknown = JSON.parse(text);
  return Array.isArray(value) ? value.map((m) => JSON.stringify(m)) : [text];
}

/** The query parameters servers name a legacy session by (the TypeScript SDK's, the Python SDK's). */
const SESSION_PARAMS = ['sessionId', 'session_id'];

/**
 * The last path segments of OAuth endpoints (RFC 6749, 7009, 7591, 7662; the SDKs' defaults): a
 * POST there carries credentials (`client_secret`, a code) and is never sent to another replica,
 * whatever the store says holds it.
 */
const OAUTH_ENDPOINTS = new Set(['authorize', 'token', 'register', 'revoke', 'introspect']);

/**
 * A request target's path and query as they came: one key per session. Not canonicalised (a
 * session id may sit in the path, in any case): a client POSTs the endpoint exactly as it was
 * given, and another spelling finds no session (404), never another session.
 */
const keyOf = (target: string): string => {
  const q = target.indexOf('?');
  return targetPath(target) + (q >= 0 ? target.slice(q) : '');
};

/**
 * With `--workers` or a fleet (`--peer-address`): what a process tells the others of the legacy
 * streams it holds (a stream named its session's message endpoint: the session's key and
 * canonical path; the stream ended), so a POST that lands on another process goes to this one
 * (proxy/peers.ts).
 */
export type LegacyStreamFact = { kind: 'open'; key: string; path: string; named?: string | undefined } | { kind: 'end'; key: string };

export class LegacySessions {
  /** Open legacy sessions by the key of their message endpoint. */
  private readonly sessions: BoundedMap<string, LegacySession>;
  /** With `--workers` or a fleet: the sessions whose stream another process holds, by key: that process (proxy/peers.ts). */
  private readonly elsewhere: BoundedMap<string, string>;
  /** Where this process's stream facts go (the other workers, or the fleet through Redis); unset with one process. */
  share: ((fact: LegacyStreamFact) => void) | undefined;
  /** Canonical paths of the message endpoints the upstream named (the newest `maxSessions`: a server may put the session in the path): a POST there is legacy traffic. */
  private readonly paths = new Set<string>();
  /** The key of the session each session parameter value names (the newest `maxSessions`). */
  private readonly byName = new Map<string, string>();
  /** Paths the policy relays unjudged (`scope.passthrough`, set by the proxy): never another replica's message path. */
  scopedOut: (path: string) => boolean = () => false;

  constructor(
    readonly mode: TransportMode,
    /** The upstream's endpoint path: under --transport sse, POSTs to it are legacy too. */
    private readonly endpointPath: string,
    private readonly maxSessions: number,
  ) {
    // A session pushed out past the bound is gone for the other workers too.
    this.sessions = new BoundedMap(maxSessions, Number.POSITIVE_INFINITY, (key) => this.share?.({ kind: 'end', key }));
    this.elsewhere = new BoundedMap(maxSessions, Number.POSITIVE_INFINITY);
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
    this.addPath(canonicalPath(target.pathname));
    this.sessions.set(key, session, now);
    if (named !== undefined) this.addName(named, key);
    this.share?.({ kind: 'open', key, path: canonicalPath(target.pathname), named });
    const absolute = /^[a-z][a-z0-9+.-]*:/i.test(data.trim());
    return { session, data: absolute ? `${publicOrigin}${upstreamTarget}` : data };
  }

  private addPath(path: string): void {
    this.paths.delete(path);
    this.paths.add(path);
    if (this.paths.size > this.maxSessions) this.paths.delete(this.paths.values().next().value!);
  }

  private addName(named: string, key: string): void {
    this.byName.delete(named);
    this.byName.set(named, key);
    if (this.byName.size > this.maxSessions) this.byName.delete(this.byName.keys().next().value!);
  }

  /**
   * Another worker's stream fact (`holder`: that worker): its message path is legacy traffic here
   * too, and its session's POSTs go there. False (nothing learnt) for a fact no upstream's endpoint
   * event gives: a path that is not its key's, a session parameter that is not the key's, or a path
   * no POST may be forwarded on (forwardable).
   */
  learnPeer(fact: LegacyStreamFact, holder: string, now: number): boolean {
    if (fact.kind === 'end') {
      if (this.elsewhere.peek(fact.key) === holder) this.elsewhere.delete(fact.key);
      return true;
    }
    if (!this.forwardable(fact.key) || fact.path !== canonicalPath(targetPath(fact.key))) return false;
    if (fact.named !== this.sessionParam(fact.key)) return false;
    this.addPath(fact.path);
    if (fact.named !== undefined) this.addName(fact.named, fact.key);
    this.elsewhere.set(fact.key, holder, now);
    return true;
  }

  /**
   * Whether a POST to `target` may be a legacy message POST held by another process: never on the
   * MCP endpoint's own path (Streamable HTTP lives there; under --transport sse it is the legacy
   * endpoint), a well-known or OAuth path, or a path the policy relays unjudged; never under
   * --transport streamable-http.
   */
  forwardable(target: string): boolean {
    if (this.mode === 'streamable-http') return false;
    const path = canonicalPath(targetPath(target));
    if (this.mode === 'auto' && path === canonicalPath(this.endpointPath)) return false;
    if (path.startsWith('/.well-known/') || OAUTH_ENDPOINTS.has(path.slice(path.lastIndexOf('/') + 1).toLowerCase())) return false;
    return !this.scopedOut(path);
  }

  /** A worker is gone: so are the sessions whose stream it held (their POSTs find no session, as after their stream's end). */
  forgetHolder(holder: string): void {
    for (const key of this.elsewhere.keys()) if (this.elsewhere.peek(key) === holder) this.elsewhere.delete(key);
  }

  /**
   * The worker holding the stream of the session a POST names (by its message path, or by its
   * session parameter on any path), when not this process (this one's own sessions come first).
   */
  holderOf(target: string, now: number): string | undefined {
    if (this.elsewhere.size === 0) return undefined;
    const key = keyOf(target);
    if (this.sessions.peek(key)) return undefined;
    const byPath = this.elsewhere.get(key, now);
    if (byPath !== undefined) return byPath;
    const byName = this.nameOf(target);
    return byName === undefined || this.sessions.peek(byName) ? undefined : this.elsewhere.get(byName, now);
  }

  /**
   * Whether a POST names a legacy session no stream here or known elsewhere carries, by a session
   * parameter or on a message path: with --workers, its stream's fact may be one IPC hop behind it.
   */
  unplaced(target: string, now: number): boolean {
    if (this.lookup(target, now) === 'unknown') return this.holderOf(target, now) === undefined;
    return this.sessionParam(target) !== undefined && this.named(target, now) === undefined && this.holderOf(target, now) === undefined;
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

  /**
   * The open session a request target names by its session parameter (`?sessionId=`), whatever
   * its path: a server may route several paths to its sessions. Undefined when it names none.
   */
  named(target: string, now: number): LegacySession | undefined {
    const key = this.nameOf(target);
    return key === undefined ? undefined : this.sessions.get(key, now);
  }

  /** The key of the session a request target's session parameter names, if it names one. */
  private nameOf(target: string): string | undefined {
    const id = this.sessionParam(target);
    return id === undefined ? undefined : this.byName.get(id);
  }

  /** The session parameter's value a request target carries (`?sessionId=`), if any (none under streamable-http). */
  private sessionParam(target: string): string | undefined {
    const q = target.indexOf('?');
    if (q < 0 || this.mode === 'streamable-http') return undefined;
    const params = new URLSearchParams(target.slice(q + 1));
    return SESSION_PARAMS.map((p) => params.get(p)).find((v) => v !== null) ?? undefined;
  }

  /** What a POST names its session by: its key (path and query), and its session parameter if it has one (where a fleet looks the session's holder up). */
  names(target: string): { key: string; named: string | undefined } {
    return { key: keyOf(target), named: this.sessionParam(target) };
  }

  /** The session's stream ended: its POSTs are answered 404 from now on (unless another stream has named the same endpoint since). */
  end(session: LegacySession): void {
    if (this.sessions.peek(session.via.session) !== session) return;
    this.sessions.delete(session.via.session);
    this.share?.({ kind: 'end', key: session.via.session });
  }
}
