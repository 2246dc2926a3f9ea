// The record of one HTTP exchange on the MCP endpoint that the endpoint and its verdicts share.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JsonRpcId, Message } from '../codec/jsonrpc.ts';
import type { Flow } from '../exchange/correlate.ts';
import type { Frame } from '../pipeline.ts';
import type { Policy } from '../policy/types.ts';
import type { PolicedFinding } from '../rewrite/decide.ts';
import type { BodyProblem, PostSubject } from '../rules/types.ts';
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
  /** The raw JSON text of each of requestIds (codec idTokenOf): it keys an integer beyond 2^53. */
  requestTokens: Array<string | undefined>;
  batch: boolean;
  /** Set when the client goes away first; aborts the upstream request. */
  gone: ClientGone;
  /** What the server sent that answered nothing (the first such body or event). */
  bodyProblem?: BodyProblem;
  /** Responses the server sent on this exchange that matched no open request (bounded). */
  unmatched: Message[];
  /** The client's POST body through the pipeline (a POST only). */
  inbound?: Frame;
  /** The POST as the server's rules judged it, when its body's relay judged it before writing (judgePost logs it). */
  judged?: JudgedPost;
}

/** The POST as the server's rules judged it: its subject, and their findings through the policy. */
export interface JudgedPost {
  subject: PostSubject;
  findings: PolicedFinding[];
  /** Rules a decision on the POST applied (relayBody's -32700 for a body that did not parse). */
  applied?: ReadonlySet<string>;
}
