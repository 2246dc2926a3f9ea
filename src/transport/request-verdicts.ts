// What the policy does with a client's POST before it is forwarded (the client's rules: block it,
// or re-derive its 2026-07-28 headers from the body), and the verdict on the POST as a whole once
// the server replied.
import type { Logger } from 'pino';
import type { Correlator } from '../exchange/correlate.ts';
import type { OpenRequest } from '../exchange/table.ts';
import { modernRequestHeaders } from '../mcp/headers.ts';
import type { Frame } from '../pipeline.ts';
import { blockReply, police } from '../rewrite/decide.ts';
import type { Decision } from '../rewrite/types.ts';
import { encodeBody, withIdToken } from '../rewrite/encode.ts';
import type { RuleEngine } from '../rules/engine.ts';
import type { PostSubject } from '../rules/types.ts';
import type { Metrics } from '../sinks/metrics.ts';
import { excerpt } from '../rules/evidence.ts';
import { loggedHeaders } from '../sinks/redact.ts';
import { logDecision, logExchange, logFindings, whereOf, type FindingContext } from '../sinks/exchange-log.ts';
import { upstreamHeaders } from './ingress.ts';
import type { HttpExchange, JudgedPost } from './http-exchange.ts';
import { mediaType } from './media-type.ts';
import type { UpstreamResponse } from './upstream.ts';

const appliedIn = (open: OpenRequest): Set<string> => new Set(open.decision && open.decision.kind !== 'pass' ? open.decision.rules : []);

export function postWhere(x: HttpExchange, inbound: Frame): FindingContext {
  const first = inbound.decoded?.ok ? inbound.decoded.payload.messages[0] : undefined;
  return {
    method: first && (first.kind === 'request' || first.kind === 'notification') ? first.method : undefined,
    id: x.requestIds[0],
    tool: inbound.opened[0]?.tool,
    session: x.flow.sessionId,
    protocolVersion: x.flow.protocolVersion,
  };
}

/** 2026-07-28 headers re-derived from the body, for requests whose headers disagree with it (header-mismatch, rewrite). */
function rederivedHeaders(x: HttpExchange, opened: readonly OpenRequest[]): Record<string, string> | undefined {
  if (x.policy.mode !== 'enforce') return undefined;
  const open = opened.find((o) => o.findings.some((f) => f.rule === 'header-mismatch' && f.action === 'rewrite'));
  if (!open) return undefined;
  const schema = open.tool ? x.flow.session.tools.get(open.tool)?.inputSchema : undefined;
  return modernRequestHeaders(open.method, open.params, schema);
}

const headerText = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v.join(', ') : v);

export interface RequestVerdict {
  /** The client was answered by the policy; nothing is forwarded. */
  blocked: boolean;
  /** Headers to forward instead of the client's (re-derived from the body). */
  headers?: Record<string, string | string[]>;
}

export function judgeClientRequest(
  x: HttpExchange,
  inbound: Frame,
  deps: { logger: Logger; correlator: Correlator; metrics: Metrics; now: () => number },
): RequestVerdict {
  const { logger } = deps;
  const opened = inbound.opened.filter((o) => o.from === 'client');
  const derived = rederivedHeaders(x, opened);
  const where = postWhere(x, inbound);
  const postApplied = new Set(opened.flatMap((o) => [...appliedIn(o)]));
  if (derived) postApplied.add('header-mismatch');
  logFindings(logger, inbound.postFindings, where, postApplied);
  deps.metrics.found(inbound.postFindings);
  for (const open of opened) {
    const applied = appliedIn(open);
    if (derived) applied.add('header-mismatch');
    logFindings(logger, open.findings, whereOf(open), applied);
  }

  const blocking = opened.find((o) => o.decision?.kind === 'reject');
  if (blocking?.decision?.kind === 'reject') {
    const { message, status } = blocking.decision;
    logDecision(logger, blocking.decision, whereOf(blocking));
    // Each with its request's id as the client wrote it (1.0, 1e2, an integer beyond 2^53).
    const replies = opened.map((o) => withIdToken({ ...message, id: o.id }, o.idToken));
    const body = encodeBody(replies, x.batch);
    x.res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
    x.res.end(body);
    for (const o of opened) {
      const c = deps.correlator.abandon(x.flow.scope, 'client', o.id, deps.now(), 'blocked', x.flow.exchange, o.idToken);
      if (!c) continue;
      logExchange(logger, c, { status, transport: 'none' });
      deps.metrics.exchange(c, status, (tool) => x.flow.session.tools.has(tool));
    }
    return { blocked: true };
  }

  // A body that opened no request (notifications, responses, or nothing readable) has no request to
  // block, but the policy may still stop it: the client gets one error with id null, on 400.
  const postBlock = x.policy.mode === 'enforce' && opened.length === 0 ? inbound.postFindings.find((f) => f.action === 'block') : undefined;
  if (postBlock) {
    const decision: Decision = {
      kind: 'reject',
      message: blockReply(postBlock, 'client', undefined, false).message,
      status: 400,
      rules: [postBlock.rule],
    };
    logDecision(logger, decision, where);
    deps.metrics.decided(decision);
    const body = Buffer.from(JSON.stringify(decision.message), 'utf8');
    x.res.writeHead(400, { 'content-type': 'application/json', 'content-length': body.length });
    x.res.end(body);
    return { blocked: true };
  }

  if (!derived) return { blocked: false };
  const headers = { ...upstreamHeaders(x.req), ...derived };
  const before = Object.fromEntries(Object.keys(derived).map((k) => [k, headerText(x.req.headers[k])]));
  // Mcp-Param-* values are tool arguments: they are logged as log.arguments says.
  const shown = (h: Record<string, string | undefined>) => excerpt(loggedHeaders(h, x.policy.log.arguments));
  logger.info(
    {
      rule: 'header-mismatch',
      rules: ['header-mismatch'],
      ...where,
      session: where.session ?? null,
      before: shown(before),
      after: shown(derived),
    },
    'rewrite',
  );
  return { blocked: false, headers };
}

/** The server's rules on the POST as a whole (about the HTTP exchange), through the policy. */
export function judgedPost(
  x: HttpExchange,
  inbound: Frame,
  up: UpstreamResponse,
  reply: Frame | undefined,
  engine: RuleEngine,
): JudgedPost {
  const subject: PostSubject = {
    kind: 'post',
    version: x.flow.protocolVersion,
    requestHeaders: x.req.headers,
    request: inbound.decoded!,
    status: up.status,
    contentType: mediaType(up.headers['content-type']) || undefined,
    responseHeaders: up.headers,
    response: reply?.decoded,
    responseBytes: reply?.size ?? 0,
    session: x.flow.session,
  };
  const where = postWhere(x, inbound);
  return {
    subject,
    findings: police(engine.evaluate(subject, 'server'), x.policy, { method: where.method, tool: where.tool }, (r) => engine.groupOf(r)),
  };
}

/** Logs the POST's findings once the server replied; `judged` when the body's relay judged it already (to decide before writing). */
export function judgePost(
  x: HttpExchange,
  inbound: Frame,
  up: UpstreamResponse,
  reply: Frame | undefined,
  deps: { logger: Logger; metrics: Metrics; engine: RuleEngine },
  judged = judgedPost(x, inbound, up, reply, deps.engine),
): void {
  logFindings(deps.logger, judged.findings, postWhere(x, inbound), judged.applied);
  deps.metrics.found(judged.findings);
}
