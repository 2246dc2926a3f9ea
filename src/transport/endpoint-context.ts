// What the MCP endpoint's handlers share: the proxy's context, one HTTP exchange as they follow it,
// and the one writer of what the engine judged.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Message } from '../codec/jsonrpc.ts';
import type { Limits } from '../config/defaults.ts';
import type { Engine } from '../engine/engine.ts';
import type { Judged } from '../engine/plans.ts';
import type { ExchangeState } from '../engine/state.ts';
import { recordJudged, type JudgedSinks } from '../sinks/judged.ts';
import type { ClientGone } from './client-gone.ts';
import type { JudgingQueue } from './judge-later.ts';
import type { BodyBudget } from './ingress.ts';
import type { LegacySession, LegacySessions } from './legacy-sse.ts';
import type { McpRouter } from './routing.ts';
import type { Upstream, UpstreamResponse } from './upstream.ts';

export interface EndpointContext extends JudgedSinks {
  upstream: Upstream;
  limits: Limits;
  logger: Logger;
  engine: Engine;
  /** Judging put off until the poll phase is over (audit's bodies). */
  judging: JudgingQueue;
  /** Monotonic clock in ms. */
  now: () => number;
  /** Request bodies held at once, over all exchanges. */
  bodies: BodyBudget;
  /** Rewrites response headers that name the upstream's own address (WWW-Authenticate). */
  fixHeaders: (req: IncomingMessage, headers: UpstreamResponse['headers']) => UpstreamResponse['headers'];
  /** Legacy SSE sessions learned from the upstream's endpoint events. */
  legacy: LegacySessions;
  /** The origin clients reach the proxy at (an endpoint event names it). */
  publicOrigin: (req: IncomingMessage) => string;
  /** What is MCP traffic: a sniffed POST that carried JSON-RPC is learned here. */
  router: McpRouter;
  /** Where a request goes upstream: the configured endpoint's upstream path, else its own target (path and query). */
  upstreamTarget: (req: IncomingMessage) => string;
  /** The upstream's answer to an MCP request began (`path`: where the client sent it): watched for a misconfigured `--upstream`. */
  upstreamAnswered: (path: string, status: number, contentType: string | readonly string[] | undefined) => void;
  /** A sniffed POST that was not JSON-RPC: through the pass-through, its body as it came. */
  notMcp: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;
  /**
   * With a shared state store (--state redis://): learns what another replica knows of the session
   * a request names, when this one has not heard of it. Bounded by the store's timeout; never throws.
   */
  recall?: (req: IncomingMessage, messages: readonly Message[]) => Promise<void>;
}

/** One HTTP exchange: the engine's state of it, and the sockets it travels on. */
export interface Http {
  x: ExchangeState;
  req: IncomingMessage;
  res: ServerResponse;
  /** Set when the client goes away first; aborts the upstream request. */
  gone: ClientGone;
  /** The legacy SSE session a POST names: the proxy's own answers go on its stream. */
  legacy?: LegacySession;
  /** The status the server refused a legacy POST with (not 2xx): what the client still gets, whatever the proxy answers. */
  refused?: number;
}

/** Records what was judged on an exchange, under the policy it started with. */
export const recorder =
  (ctx: EndpointContext) =>
  (h: Http, judged: readonly Judged[]): void =>
    recordJudged(ctx, h.x.policy, h.x.flow.session, judged);
