// Open requests awaiting their response, keyed by (scope, who sent it, id with its type) and, for a
// request a POST carried, that POST: a client that reuses an id while the first request is still
// in flight (load generators do; the spec forbids it) gets each answer matched to its own request.
// The scope is the session when there is one (a response may come on another stream of it), else
// the HTTP exchange that carried the request. Bounded in total and per owner (session, or credential
// without one), so a flooding client evicts its own requests first; an evicted request is
// reported as unanswered.
import type { IncomingHttpHeaders } from 'node:http';
import { BoundedMap } from './bounded-map.ts';
import type { ClientInfo } from './identity.ts';
import type { RequestVerdict } from '../verdicts.ts';
import { idKey, type JsonRpcId } from '../codec/jsonrpc.ts';

export type Sender = 'client' | 'server';

export interface OpenRequest {
  scope: string;
  from: Sender;
  id: JsonRpcId;
  method: string;
  /** tools/call: the tool's name. */
  tool: string | undefined;
  params: unknown;
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  startedAt: number;
  requestBytes: number;
  /** The HTTP exchange that carried it (a POST): only that exchange's response may answer it. */
  exchange?: number;
  /** Whose request it is, for the per-owner bound: the session's key (its id, or the credential's digest); default the scope. */
  owner?: string;
  /** Headers of the HTTP request that carried it. */
  headers: IncomingHttpHeaders;
  /** The W3C trace context it carried (its _meta traceparent, else its HTTP request's). */
  traceparent?: string;
  /** The client's network address. */
  peer?: string;
  /** The client's self-reported name and version. */
  client?: ClientInfo;
  /** Another request of the same sender under this id still awaited its response when this one came. */
  idInFlight?: boolean;
  /** The id's raw JSON text as its sender wrote it (codec/jsonrpc.ts idTokenOf): a rewritten answer carries it byte for byte, and an integer beyond 2^53 is keyed by it. */
  idToken?: string;
  /** What the client's rules found on the request and what the policy does about it, set when it is opened (NO_VERDICT for a server's request). */
  verdict: RequestVerdict;
  /** In a fleet: gives up this request's claim on its id (exchange/claims.ts); called once it leaves the table, settles once the store has it. */
  release?: () => Promise<void>;
}

/** The correlation scope of a session named by Mcp-Session-Id (exchange/flow.ts): the same on every replica of a fleet. */
export const sessionScope = (sessionId: string): string => `sid:${sessionId}`;

/** `token`: the id's raw text (OpenRequest.idToken), which keys an integer beyond 2^53 (idKey). */
export const requestKey = (scope: string, from: Sender, id: JsonRpcId, token?: string): string => `${scope}|${from}|${idKey(id, token)}`;

/** The requestKey of an open request. */
const baseKey = (req: OpenRequest): string => requestKey(req.scope, req.from, req.id, req.idToken);

/** The key of one open request: its requestKey, and the POST that carried it. */
const entryKey = (base: string, req: OpenRequest): string => (req.exchange === undefined ? base : `${base}#${req.exchange}`);

/** Whether a response read on `exchange` (undefined: a stream of the session, e.g. a GET) may answer `req`. */
const answerableOn = (req: OpenRequest, exchange: number | undefined): boolean =>
  exchange === undefined || req.exchange === undefined || req.exchange === exchange;

/**
 * Why the proxy stopped waiting for a response: the table was full, it idled out, its id was
 * reused in the same POST, the client dropped its stream and did not resume it in time, the
 * server ended a resumable stream and no resumption brought the answer in time, or the proxy shut
 * down.
 */
export type Unanswered = 'capacity' | 'idle' | 'replaced' | 'client-closed' | 'not-resumed' | 'shutdown';

/** Why a request given up at a time of its own is given up: a dropped stream that was not resumed. */
export type ResumeDeadline = Extract<Unanswered, 'client-closed' | 'not-resumed'>;

export class RequestTable {
  /** Where the releases of claims go while an answer is judged before it is delivered (Correlator.collectReleases). */
  releasing: Array<Promise<void>> | undefined;
  private readonly open: BoundedMap<string, OpenRequest>;
  /** Requests given up at a time of their own (dropped streams awaiting resumption). */
  private readonly deadlines = new Map<string, { at: number; why: ResumeDeadline }>();
  /** Each owner's open keys, oldest first. */
  private readonly byOwner = new Map<string, Set<string>>();
  /** The open keys under each requestKey, oldest first (more than one only while an id is reused in flight). */
  private readonly byId = new Map<string, Set<string>>();

  constructor(
    private readonly maxOpen: number,
    idleMs: number,
    private readonly onUnanswered: (req: OpenRequest, why: Unanswered) => void,
    private readonly maxPerOwner: number = maxOpen,
  ) {
    // Capacity is enforced here, per owner; the map only expires idle entries.
    this.open = new BoundedMap(Number.POSITIVE_INFINITY, idleMs, (key, req, why) => {
      this.forget(key, req);
      onUnanswered(req, why);
    });
  }

  get size(): number {
    return this.open.size;
  }

  /** Adds a request; one still open under the same key (an id reused in the same POST) is reported as unanswered. */
  add(req: OpenRequest, now: number): void {
    const base = baseKey(req);
    const key = entryKey(base, req);
    // The claim on the id stays held while either is open: a request replacing one that held it takes it over.
    const replaced = this.open.peek(key);
    if (replaced?.release && !req.release) {
      req.release = replaced.release;
      replaced.release = undefined;
    }
    const previous = this.remove(key);
    if (previous) this.onUnanswered(previous, 'replaced');
    const owner = req.owner ?? req.scope;
    if ((this.byOwner.get(owner)?.size ?? 0) >= this.maxPerOwner) this.evictOldest(this.byOwner.get(owner));
    if (this.open.size >= this.maxOpen) this.evictOldest(this.busiest());
    // Looked up again: an eviction above may have emptied (and dropped) the owner's set.
    let mine = this.byOwner.get(owner);
    if (!mine) this.byOwner.set(owner, (mine = new Set()));
    mine.add(key);
    let same = this.byId.get(base);
    if (!same) this.byId.set(base, (same = new Set()));
    same.add(key);
    this.open.set(key, req, now);
  }

  /**
   * The key of the oldest open request under this id that a response read on `exchange` may
   * answer (undefined: any, e.g. on a GET stream).
   */
  private find(scope: string, from: Sender, id: JsonRpcId, token: string | undefined, exchange: number | undefined): string | undefined {
    const same = this.byId.get(requestKey(scope, from, id, token));
    if (!same) return undefined;
    for (const key of same) {
      const req = this.open.peek(key);
      if (req && answerableOn(req, exchange)) return key;
    }
    return undefined;
  }

  /** The open request a response read on `exchange` would answer, left in place. */
  peek(scope: string, from: Sender, id: JsonRpcId, token?: string, exchange?: number): OpenRequest | undefined {
    const key = this.find(scope, from, id, token, exchange);
    return key === undefined ? undefined : this.open.peek(key);
  }

  /** Removes and returns the open request a response read on `exchange` answers. */
  take(scope: string, from: Sender, id: JsonRpcId, token?: string, exchange?: number): OpenRequest | undefined {
    const key = this.find(scope, from, id, token, exchange);
    return key === undefined ? undefined : this.remove(key);
  }

  /** Removes and returns every open request of `owner` (a session whose transport ended), oldest first. */
  takeOwned(owner: string): OpenRequest[] {
    const out: OpenRequest[] = [];
    for (const key of [...(this.byOwner.get(owner) ?? [])]) {
      const req = this.remove(key);
      if (req) out.push(req);
    }
    return out;
  }

  /** That request is given up at `at` (reported as `why`) unless answered first. */
  deadline(scope: string, from: Sender, id: JsonRpcId, at: number, why: ResumeDeadline, token?: string, exchange?: number): void {
    const key = this.find(scope, from, id, token, exchange);
    if (key !== undefined) this.deadlines.set(key, { at, why });
  }

  sweep(now: number): void {
    for (const [key, { at, why }] of this.deadlines) {
      if (at > now) continue;
      const req = this.remove(key);
      if (req) this.onUnanswered(req, why);
    }
    this.open.sweep(now);
  }

  /** Every request still open is given up (the proxy is shutting down): each reported `shutdown`. */
  giveUpAll(): void {
    for (const key of [...this.open.keys()]) {
      const req = this.remove(key);
      if (req) this.onUnanswered(req, 'shutdown');
    }
  }

  private remove(key: string): OpenRequest | undefined {
    const req = this.open.delete(key);
    if (req) this.forget(key, req);
    return req;
  }

  private forget(key: string, req: OpenRequest): void {
    this.deadlines.delete(key);
    const owner = req.owner ?? req.scope;
    const mine = this.byOwner.get(owner);
    mine?.delete(key);
    if (mine?.size === 0) this.byOwner.delete(owner);
    const base = baseKey(req);
    const same = this.byId.get(base);
    same?.delete(key);
    if (same?.size === 0) this.byId.delete(base);
    const { release } = req;
    if (!release) return;
    req.release = undefined;
    // Another request of this process under the same id is still open: the claim is its now.
    const heirKey = same?.values().next().value;
    const heir = heirKey === undefined ? undefined : this.open.peek(heirKey);
    if (heir && !heir.release) heir.release = release;
    else {
      // Called whether or not an answer waits for it (`?.` would skip the call too).
      const done = release();
      this.releasing?.push(done);
    }
  }

  /** The owner with the most open requests: the one a full table takes from (only at capacity). */
  private busiest(): Set<string> | undefined {
    let most: Set<string> | undefined;
    for (const keys of this.byOwner.values()) if (!most || keys.size > most.size) most = keys;
    return most;
  }

  private evictOldest(keys: Set<string> | undefined): void {
    const oldest = keys?.values().next();
    if (!oldest || oldest.done) return;
    const req = this.remove(oldest.value);
    if (req) this.onUnanswered(req, 'capacity');
  }
}
