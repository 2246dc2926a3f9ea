// Carries what the engine judged to the sinks: log records, metrics and the opt-in capture.
// Record types and field names are an interface (README, "Log records").
import type { Logger } from 'pino';
import { skippedSchema, unjudgedReason } from '../engine/coverage.ts';
import type { Judged, JudgedExchange } from '../engine/plans.ts';
import type { UnsafePattern } from '../rules/schema-regexp.ts';
import type { Session } from '../exchange/sessions.ts';
import type { Policy } from '../config/types.ts';
import { excerpt } from '../redact/excerpt.ts';
import type { CaptureSink } from './capture.ts';
import { logDecision, logExchange, logFindings, type ShadowOf } from './exchange-log.ts';
import { shadowAction } from './shadow.ts';
import type { Tracing } from './tracing.ts';
import type { LiveReport } from '../report/live.ts';
import type { Metrics } from './metrics.ts';
import { loggedHeaders } from './redact.ts';

export interface JudgedSinks {
  logger: Logger;
  metrics: Metrics;
  /** The capture sink writing to a path (one per path, opened on first use). */
  capture: (path: string) => CaptureSink;
  /** The shadow policy: under audit, what it would do with each finding (`--shadow`). */
  shadow?: Policy;
  /** OpenTelemetry export (`--otlp-endpoint`): a span per exchange. */
  tracing?: Tracing;
  /** The live report the admin port serves (`/report`): on only with the admin port. */
  report?: LiveReport;
}

/** The schemas already named in a `schema not judged` record (each is cached with its compiled schema). */
const noticed = new WeakSet<UnsafePattern>();

/** Names, once per schema, the pattern that keeps the rules from validating against it (its exchanges each say `unjudged`). */
function noticeSkippedSchema(logger: Logger, judged: JudgedExchange): void {
  const skipped = judged.subject && skippedSchema(judged.subject);
  if (!skipped || noticed.has(skipped.unsafe)) return;
  noticed.add(skipped.unsafe);
  const { request } = judged.exchange;
  logger.warn(
    {
      tool: skipped.tool,
      schema: skipped.schema,
      pattern: excerpt(skipped.unsafe.pattern, 200),
      why: skipped.unsafe.message,
      session: request.sessionId ?? null,
      protocolVersion: request.protocolVersion ?? null,
    },
    'schema not judged',
  );
}

/** Records what was judged under `policy` (its log.arguments, its capture); `session`: whose tool catalogue labels the metrics. */
export function recordJudged(sinks: JudgedSinks, policy: Policy, session: Session | undefined, judged: readonly Judged[]): void {
  const { logger, metrics } = sinks;
  // Under audit only: under enforce the policy in force already says what is done.
  const { shadow } = sinks;
  const shadowOf: ShadowOf =
    shadow && policy.mode === 'audit'
      ? (f, where) => {
          const action = shadowAction(shadow, f, where);
          metrics.shadowDecided(f.rule, action);
          return action;
        }
      : undefined;
  // One answer the proxy gave itself counts once, however many requests it answered (a batch).
  let answered: Set<string> | undefined;
  for (const j of judged) {
    switch (j.kind) {
      case 'exchange': {
        const unjudged = unjudgedReason(j.judged, j.http);
        if (unjudged !== undefined) metrics.unjudged(unjudged);
        if (unjudged === 'unsafe-schema') noticeSkippedSchema(logger, j.judged);
        // A detached record belongs to no exchange in progress: its arguments stay redacted and its
        // tool is labelled without a catalogue, whoever's plan carries it.
        logExchange(logger, j.judged, j.http, j.detached ? 'redacted' : policy.log.arguments, shadowOf, unjudged);
        if (j.http.proxyError) {
          const { scope, exchange } = j.judged.exchange.request;
          const key = exchange === undefined ? undefined : `${scope}\u0000${exchange}`;
          if (key === undefined || !answered?.has(key)) metrics.proxyError(j.http.proxyError);
          if (key !== undefined) (answered ??= new Set()).add(key);
        }
        sinks.tracing?.exchange(j.judged, j.http);
        sinks.report?.exchange(j.judged, j.http.status, policy, shadow, unjudged);
        metrics.exchange(j.judged, j.http.status, (tool) => !j.detached && (session?.tools.has(tool) ?? false));
        // The capture keeps what the rules judged (the server's status and body), not what a rewrite sent.
        if (policy.capture && j.judged.subject)
          sinks.capture(policy.capture.path).exchange(j.judged.exchange, j.judged.subject, policy, new Date());
        break;
      }
      case 'findings':
        logFindings(logger, j.findings, j.where, j.on, j.applied, shadowOf);
        // A request's own findings reach the live report with its exchange.
        if (j.on !== 'request') sinks.report?.findings(j.findings, j.where);
        if (j.counted) metrics.found(j.findings);
        break;
      case 'decision':
        logDecision(logger, j.decision, j.where);
        if (j.counted) metrics.decided(j.decision);
        break;
      case 'headers-rewritten': {
        // Mcp-Param-* values are tool arguments: they are logged as log.arguments says.
        const shown = (h: Record<string, string | undefined>) => excerpt(loggedHeaders(h, policy.log.arguments));
        const { where } = j;
        logger.info(
          {
            rule: 'header-mismatch',
            rules: ['header-mismatch'],
            ...where,
            session: where.session ?? null,
            before: shown(j.before),
            after: shown(j.after),
          },
          'rewrite',
        );
        break;
      }
      case 'undecodable':
        logger.info(
          { from: j.from, problem: j.problem, detail: j.detail, session: j.session, transport: j.transport, bytes: j.bytes },
          'undecodable',
        );
        break;
      case 'catalogue-dropped':
        logger.warn({ tools: j.tools, bytes: j.bytes, sessions: j.sessions, limit: j.limit }, 'catalogue dropped');
        break;
    }
  }
}
