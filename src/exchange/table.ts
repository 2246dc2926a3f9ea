// Open requests awaiting their response, keyed by (scope, who sent it, id with its type). The
// scope is the session when there is one (a response may come on another stream of it), else the
// HTTP exchange that carried the request. Bounded; an evicted request is reported as unanswered.
import type { IncomingHttpHeaders } from 'node:http';
import { BoundedMap } from './bounded-map.ts';
import type { PolicedFinding } from '../rewrite/decide.ts';
import type { Decision } from '../rewrite/types.ts';
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
  /** Headers of the HTTP request that carried it. */
  headers: IncomingHttpHeaders;
  /** What the client's rules found on the request, through the policy. */
  findings: PolicedFinding[];
  /** What the policy does about the request (block it, or fix it before it is forwarded). */
  decision?: Decision;
}

export const requestKey = (scope: string, from: Sender, id: JsonRpcId): string => `${scope}|${from}|${idKey(id)}`;

export class RequestTable {
  private readonly open: BoundedMap<string, OpenRequest>;

  constructor(
    maxOpen: number,
    idleMs: number,
    private readonly onUnanswered: (req: OpenRequest, why: 'capacity' | 'idle' | 'replaced') => void,
  ) {
    this.open = new BoundedMap(maxOpen, idleMs, (_key, req, why) => onUnanswered(req, why));
  }

  get size(): number {
    return this.open.size;
  }

  /** Adds a request; one still open under the same key (a reused id) is reported as unanswered. */
  add(req: OpenRequest, now: number): void {
    const key = requestKey(req.scope, req.from, req.id);
    const previous = this.open.delete(key);
    if (previous) this.onUnanswered(previous, 'replaced');
    this.open.set(key, req, now);
  }

  /** Removes and returns the open request a response answers. */
  take(scope: string, from: Sender, id: JsonRpcId): OpenRequest | undefined {
    return this.open.delete(requestKey(scope, from, id));
  }

  sweep(now: number): void {
    this.open.sweep(now);
  }
}
