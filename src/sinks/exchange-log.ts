// Turns completed exchanges, their findings and stream ends into log records. Field names are an
// interface: dashboards and scripts read them (README, "Log records").
import type { UnjudgedReason } from '../engine/coverage.ts';
import type { Logger } from 'pino';
import { whereOf, type ExchangeHttp, type FindingContext, type FindingsOn, type JudgedExchange } from '../engine/plans.ts';
import type { PolicedFinding } from '../rewrite/decide.ts';
import type { Decision } from '../rewrite/types.ts';
import { traceIdOf } from '../exchange/identity.ts';
import type { OpenRequest } from '../exchange/table.ts';
import type { Action } from '../verdicts.ts';
import { LOG_BOUNDS } from '../config/defaults.ts';
import { excerpt } from '../redact/excerpt.ts';
import { peerText, peerValue } from '../redact/peer.ts';
import { clipOptional } from '../util/clip.ts';
import { loggedArguments, redactText } from './redact.ts';
import { infoRecord } from './logger.ts';
import { observeServer } from './server-record.ts';
import type { FrameworkId } from '../frameworks/frameworks.ts';
import { frameworkFixLine } from '../rules/explain.ts';

const round = (ms: number): number => Math.round(ms * 100) / 100;

/** The client's User-Agent as a record shows it (excerpted, masked). */
export const userAgentOf = (headers: OpenRequest['headers']): string | undefined => {
  const ua = headers['user-agent'];
  return typeof ua === 'string' ? excerpt(ua, 200) : undefined;
};

/** A peer's own string as a record carries it: masked for credential shapes, cut to LOG_BOUNDS. */
const peer = <T>(value: T): T | string => peerValue(value, LOG_BOUNDS.stringChars);
/** A session id is what joins a session's records: cut, never masked. */
const sessionOf = (session: string | null | undefined): string | null => clipOptional(session ?? null, LOG_BOUNDS.stringChars);

/** The fields that say which exchange a record is about. */
const whereFields = (where: FindingContext) => ({
  method: peer(where.method),
  id: peer(where.id),
  tool: peer(where.tool),
  session: sessionOf(where.session),
  protocolVersion: peer(where.protocolVersion ?? null),
});

/** What the shadow policy would do with a finding (audit only; undefined: no shadow). */
export type ShadowOf = ((f: PolicedFinding, where: FindingContext) => Action) | undefined;

/**
 * `violation` records. `on`: what was judged: the exchange's answer (its `exchange` record follows
 * at once), the request as it came (its exchange record comes when it completes), a POST as a
 * whole or a stdio line (no exchange record is theirs).
 */
export function logFindings(
  logger: Logger,
  findings: readonly PolicedFinding[],
  where: FindingContext,
  on: 'exchange' | FindingsOn = 'exchange',
  applied: ReadonlySet<string> = NONE,
  shadowOf?: ShadowOf,
  framework?: FrameworkId,
): void {
  for (const f of findings) {
    const record = {
      rule: f.rule,
      severity: f.severity,
      // Rules build evidence with excerpt(), already redacted; a message or fix may quote a peer's
      // string whole (a tool name), so both are masked and cut like one.
      message: peerText(f.message, LOG_BOUNDS.textChars),
      ...whereFields(where),
      pointer: f.pointer,
      evidence: redactText(f.evidence),
      fix: peerText(f.fix, LOG_BOUNDS.textChars),
      // The fix in the server's own framework, where it differs (the session's `server` record says which).
      frameworkFix: frameworkFixLine(f.rule, framework),
      action: f.action,
      applied: applied.has(f.rule),
      shadow: shadowOf?.(f, where),
      on,
    };
    // Findings are the product: --log-level warn keeps every violation of severity warning or error.
    if (f.severity === 'info') logger.info(record, 'violation');
    else logger.warn(record, 'violation');
  }
}

const NONE: ReadonlySet<string> = new Set();

/** A rewrite or block the policy applied: what the client would have received, and what it got. */
export function logDecision(logger: Logger, decision: Decision, where: FindingContext): void {
  if (decision.kind === 'pass') return;
  logger.info(
    {
      rule: decision.rules[0],
      rules: decision.rules,
      ...whereFields(where),
      status: decision.status,
      before: decision.kind === 'mutate' ? redactText(decision.before) : undefined,
      after: excerpt(decision.message, 2000),
    },
    decision.kind === 'mutate' ? 'rewrite' : 'block',
  );
}

const appliedRules = (decision: Decision): ReadonlySet<string> =>
  decision.kind === 'pass' ? NONE : new Set(decision.kind === 'mutate' ? [...decision.rules, ...decision.settled] : decision.rules);

/** An exchange's findings, the policy's decision and its record (`args`: how tool arguments appear, the policy's log.arguments). */
export function logExchange(
  logger: Logger,
  judged: JudgedExchange,
  http: ExchangeHttp,
  args: 'off' | 'redacted' | 'full' = 'redacted',
  shadowOf?: ShadowOf,
  unjudged?: UnjudgedReason,
): void {
  const { exchange: c, decision } = judged;
  const { request } = c;
  const where = whereOf(request);
  const framework = observeServer(logger, judged.subject, sessionOf(where.session));
  logFindings(logger, judged.findings, where, 'exchange', appliedRules(decision), shadowOf, framework);
  logDecision(logger, decision, where);
  // An exchange not judged in full is news (a clean log must mean a clean server): at warn.
  // A level that writes no such record (--log-level warn: findings only) does not build it either.
  if (!logger.isLevelEnabled(unjudged === undefined ? 'info' : 'warn')) return;
  const write = unjudged === undefined ? infoRecord : (l: Logger, r: Record<string, unknown>, m: string) => l.warn(r, m);
  write(
    logger,
    {
      method: peer(request.method),
      id: peer(request.id),
      tool: peer(request.tool),
      arguments: loggedArguments(request.params, args),
      from: request.from,
      // Who and which trace (self-reported client; User-Agent as the HTTP client sent it, masked).
      traceId: traceIdOf(request.traceparent),
      peer: request.peer,
      userAgent: userAgentOf(request.headers),
      clientName: peer(request.client?.name),
      clientVersion: peer(request.client?.version),
      session: sessionOf(request.sessionId),
      protocolVersion: peer(request.protocolVersion ?? null),
      status: http.status,
      transport: http.transport,
      outcome: c.outcome,
      proxyError: http.proxyError,
      expired: http.expired,
      violations: request.verdict.findings.length + judged.findings.length,
      verdict: decision.kind === 'mutate' ? 'rewrite' : decision.kind === 'reject' ? 'block' : undefined,
      durationMs: round(c.durationMs),
      requestBytes: request.requestBytes,
      responseBytes: c.responseBytes,
      unjudged,
    },
    'exchange',
  );
}
