// The record of one HTTP exchange on the MCP endpoint that the endpoint and its verdicts share.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JsonRpcId, Message } from '../codec/jsonrpc.ts';
import type { Flow } from '../exchange/correlate.ts';
import type { Policy } from '../policy/types.ts';
import type { BodyProblem } from '../rules/types.ts';
import type { ClientGone } from './client-gone.ts';

/** One HTTP exchange on the endpoint, from the proxy's point of view. */
export interface HttpExchange {
  req: IncomingMessage;
  res: ServerResponse;
  flow: Flow;
  /** The policy this exchange started under; a reload does not change it. */
  policy: Policy;
  /** Ids of the requests this POST carried (the ones the client is waiting on). */
  requestIds: JsonRpcId[];
  batch: boolean;
  /** Set when the client goes away first; aborts the upstream request. */
  gone: ClientGone;
  /** What the server sent that answered nothing (the first such body or event). */
  bodyProblem?: BodyProblem;
  /** Responses the server sent on this exchange that matched no open request (bounded). */
  unmatched: Message[];
}
