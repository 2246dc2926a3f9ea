// Matches responses to requests and learns session facts from them (version, capabilities, tool
// catalogue). No I/O: the transport passes in what it saw and the clock, and logs what comes back.
import type { IncomingHttpHeaders } from 'node:http';
import { idTokenOf, type JsonRpcId, type Message } from '../codec/jsonrpc.ts';
import { asRecord } from '../codec/json-value.ts';
import { NO_VERDICT, type RequestVerdict } from '../verdicts.ts';
import { META } from '../mcp/versions.ts';
import type { Wire } from '../rules/types.ts';
import { clientInfoIn, clientOf, traceparentOf } from './identity.ts';
import type { Session, SessionStore } from './sessions.ts';
import type { ClaimBook } from './claims.ts';
import { requestKey, type OpenRequest, type RequestTable, type ResumeDeadline, type Sender } from './table.ts';

/** Where a message travels: the correlation scope and the session it belongs to. */
export interface Flow {
  scope: string;
  /** The client's network address (the socket's peer), for the exchange record. */
  peer?: string;
  /** The transport of the session (undefined: Streamable HTTP). */
  wire?: Wire;
  /** Headers of the client's HTTP request. */
  requestHeaders: IncomingHttpHeaders;
  session: Session;
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  /**
   * The HTTP exchange whose response this flow reads, when only that exchange's own requests may
   * be answered on it (a POST's response). Undefined for a GET stream, which may carry the answer
   * to any request of the session still waiting.
   */
  exchange?: number;
}

export interface Completed {
  request: OpenRequest;
  response: Message | undefined;
  outcome: string;
  durationMs: number;
  responseBytes: number;
}

/** The outcome field of an exchange record. */
export function outcomeOf(response: Message | undefined): string {
  if (!response) return 'no-response';
  if (response.kind === 'result') return asRecord(response.result)?.isError === true ? 'isError' : 'result';
  if (response.kind === 'error') return `error:${typeof response.code === 'number' ? response.code : String(response.code)}`;
  return 'invalid-response';
}

/** The protocol version a message declares for itself (modern _meta, or initialize's proposal). */
export function declaredVersion(msg: Message): string | undefined {
  if (msg.kind !== 'request' && msg.kind !== 'notification') return undefined;
  const params = asRecord(msg.params);
  const meta = asRecord(params?._meta);
  const fromMeta = meta?.[META.protocolVersion];
  if (typeof fromMeta === 'string') return fromMeta;
  if (msg.method === 'initialize' && typeof params?.protocolVersion === 'string') return params.protocolVersion;
  return undefined;
}

export function toolName(method: string, params: unknown): string | undefined {
  if (method !== 'tools/call') return undefined;
  const name = asRecord(params)?.name;
  return typeof name === 'string' ? name : undefined;
}

export class Correlator {
  /** In a fleet: the claims on request ids made before each POST was judged (claims.ts). */
  claims: ClaimBook | undefined;

  constructor(
    private readonly table: RequestTable,
    private readonly sessions: SessionStore,
  ) {}

  /**
   * The record of a request from `from`, not yet open: the rules judge it, then open() enters it
   * with their verdict. `drafted`: the keys of requests drafted before it in the same frame (an id
   * reused within one batch is in flight too); this one's key is added.
   */
  draft(
    msg: Extract<Message, { kind: 'request' }>,
    from: Sender,
    flow: Flow,
    bytes: number,
    now: number,
    drafted?: Set<string>,
  ): OpenRequest {
    const idToken = idTokenOf(msg);
    const claim = from === 'client' ? this.claims?.take(msg) : undefined;
    // In flight here, or (claim) on another replica of the fleet.
    let idInFlight = this.table.peek(flow.scope, from, msg.id, idToken) !== undefined || claim?.taken === true;
    if (drafted) {
      const key = requestKey(flow.scope, from, msg.id, idToken);
      idInFlight ||= drafted.has(key);
      drafted.add(key);
    }
    return {
      scope: flow.scope,
      from,
      id: msg.id,
      idToken,
      idInFlight,
      method: msg.method,
      tool: toolName(msg.method, msg.params),
      params: msg.params,
      sessionId: flow.sessionId,
      protocolVersion: flow.protocolVersion,
      startedAt: now,
      requestBytes: bytes,
      owner: flow.session.key,
      exchange: from === 'client' ? flow.exchange : undefined,
      headers: from === 'client' ? flow.requestHeaders : {},
      // Who and which trace, for the exchange record (a server's request: its trace, no client).
      traceparent: traceparentOf(msg.params, from === 'client' ? flow.requestHeaders : {}),
      peer: from === 'client' ? flow.peer : undefined,
      client: from === 'client' ? clientOf(msg.method, msg.params, flow.session.clientInfo) : undefined,
      verdict: NO_VERDICT,
      release: claim?.release,
    };
  }

  /**
   * Runs `judge`, and gives with what it returns the releases of claims it started (a fleet's):
   * what an answer judged before it is delivered waits for, so the client's next request under
   * the same id finds it free on any replica.
   */
  collectReleases<T>(judge: () => T): { value: T; releases: Array<Promise<void>> } {
    const releases: Array<Promise<void>> = [];
    this.table.releasing = releases;
    try {
      return { value: judge(), releases };
    } finally {
      this.table.releasing = undefined;
    }
  }

  /** A drafted request enters the table with its verdict; returns its entry. */
  open(draft: OpenRequest, verdict: RequestVerdict, now: number): OpenRequest {
    const open = verdict === NO_VERDICT ? draft : { ...draft, verdict };
    this.table.add(open, now);
    return open;
  }

  /** A request from `from` enters the table unjudged (replay, tests); returns its entry. */
  request(msg: Extract<Message, { kind: 'request' }>, from: Sender, flow: Flow, bytes: number, now: number): OpenRequest {
    return this.open(this.draft(msg, from, flow, bytes, now), NO_VERDICT, now);
  }

  /** The session of `flow` now knows these paths, hosts and addresses (see Session.known). */
  remember(flow: Flow, values: string[]): void {
    if (values.length > 0) this.sessions.learn({ kind: 'known', key: flow.session.key, values }, 0, flow.session);
  }

  /** A notification can change what the session knows: a changed tool list makes the catalogue stale. */
  notification(msg: Extract<Message, { kind: 'notification' }>, from: Sender, flow: Flow): void {
    if (from === 'server' && msg.method === 'notifications/tools/list_changed')
      this.sessions.learn({ kind: 'tools-changed', key: flow.session.key }, 0, flow.session);
  }

  /**
   * A response from `from` answers the other side's open request, if there is one. `newSessionId`
   * is the Mcp-Session-Id the server issued with this response (initialize).
   */
  response(msg: Message, from: Sender, flow: Flow, bytes: number, now: number, newSessionId?: string): Completed | undefined {
    const id = responseId(msg);
    if (id === undefined) return undefined;
    const asker = from === 'server' ? 'client' : 'server';
    // An answer belongs to the exchange whose response carries it: on a POST's response, only
    // that POST's requests. The SDK client matches Number(id), so "3" answering 3 is that
    // request's answer too (with a finding: the id's type changed).
    // The id's raw text keys only an integer beyond 2^53 (two such ids JSON.parse rounds to one
    // double): the scan for it is skipped for every other id.
    const token = typeof id === 'number' && !Number.isSafeInteger(id) ? idTokenOf(msg) : undefined;
    const request = this.table.take(flow.scope, asker, id, token, flow.exchange) ?? this.takeSameNumber(flow, asker, id);
    if (!request) return undefined;
    if (from === 'server') this.learn(request, msg, flow, newSessionId, now);
    return { request, response: msg, outcome: outcomeOf(msg), durationMs: now - request.startedAt, responseBytes: bytes };
  }

  /** Only when the exact id waits for nothing: the request under the same number with the other type. */
  private takeSameNumber(flow: Flow, asker: Sender, id: JsonRpcId): OpenRequest | undefined {
    const other = sameNumber(id);
    return other === undefined ? undefined : this.table.take(flow.scope, asker, other, undefined, flow.exchange);
  }

  /**
   * Ends an open request that its HTTP exchange did not answer: `no-response` (nothing came, or the
   * client left: `client-closed`) or `invalid-response` (a body came that answered nothing).
   */
  abandon(
    scope: string,
    from: Sender,
    id: JsonRpcId,
    now: number,
    outcome: string,
    exchange?: number,
    token?: string,
  ): Completed | undefined {
    // Only a request of this exchange (or of none): another exchange's under the same id is not this one to end.
    const request = this.table.take(scope, from, id, token, exchange);
    if (!request) return undefined;
    return { request, response: undefined, outcome, durationMs: now - request.startedAt, responseBytes: 0 };
  }

  /** Ends every request still open in a session whose transport ended (a legacy SSE stream, a stdio child), both sides'. */
  abandonSession(session: Session, now: number, outcome: string): Completed[] {
    return this.table
      .takeOwned(session.key)
      .map((request) => ({ request, response: undefined, outcome, durationMs: now - request.startedAt, responseBytes: 0 }));
  }

  /** The open request under this id that a response on `exchange` would answer, if any (left in place). */
  pending(scope: string, from: Sender, id: JsonRpcId, token?: string, exchange?: number): OpenRequest | undefined {
    return this.table.peek(scope, from, id, token, exchange);
  }

  /** An open request is given up at `at` unless answered first (a dropped stream that may still be resumed). */
  expire(scope: string, from: Sender, id: JsonRpcId, at: number, why: ResumeDeadline, exchange?: number, token?: string): void {
    this.table.deadline(scope, from, id, at, why, token, exchange);
  }

  private learn(request: OpenRequest, msg: Message, flow: Flow, newSessionId: string | undefined, now: number): void {
    if (msg.kind !== 'result') return;
    const result = asRecord(msg.result);
    if (!result) return;
    if (request.method === 'initialize') {
      // A modern request (its version in _meta) negotiates nothing, whatever the server answers.
      if (typeof asRecord(asRecord(request.params)?._meta)?.[META.protocolVersion] === 'string') return;
      const session = newSessionId ? this.sessions.open(`sid:${newSessionId}`, newSessionId, now) : flow.session;
      this.sessions.learn(
        {
          kind: 'initialized',
          key: session.key,
          sessionId: session.sessionId,
          version: typeof result.protocolVersion === 'string' ? result.protocolVersion : undefined,
          serverCapabilities: asRecord(result.capabilities),
          clientCapabilities: asRecord(asRecord(request.params)?.capabilities),
          clientInfo: clientInfoIn(asRecord(request.params)?.clientInfo),
          serverInfo: clientInfoIn(result.serverInfo),
        },
        now,
        session,
      );
      request.sessionId ??= newSessionId;
      request.protocolVersion = session.protocolVersion ?? request.protocolVersion;
    } else if (request.method === 'server/discover') {
      const { key, sessionId } = flow.session;
      this.sessions.learn({ kind: 'discovered', key, sessionId, serverCapabilities: asRecord(result.capabilities) }, now, flow.session);
    } else if (request.method === 'tools/list') {
      // The server answered on this session: its id (or the credential) is one it accepts.
      const { key, sessionId } = flow.session;
      const firstPage = asRecord(request.params)?.cursor === undefined;
      this.sessions.learn(
        { kind: 'tools', key, sessionId, tools: result.tools, firstPage, lastPage: result.nextCursor === undefined },
        now,
        flow.session,
      );
    }
  }
}

/** The id of the other type that the same number would be (`3` and `"3"`), if any. */
function sameNumber(id: JsonRpcId): JsonRpcId | undefined {
  if (typeof id === 'number') return Number.isSafeInteger(id) ? String(id) : undefined;
  return /^-?(0|[1-9]\d{0,15})$/.test(id) && Number.isSafeInteger(Number(id)) ? Number(id) : undefined;
}

function responseId(msg: Message): JsonRpcId | undefined {
  if (msg.kind === 'result' || msg.kind === 'error' || msg.kind === 'invalid') return msg.id ?? undefined;
  return undefined;
}
