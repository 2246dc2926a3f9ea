// Turns completed exchanges, their findings and stream ends into log records. Field names are an
// interface: dashboards and scripts read them (README, "Log records").
import type { Logger } from 'pino';
import type { Completed } from '../exchange/correlate.ts';
import type { OpenRequest } from '../exchange/table.ts';
import type { PolicedFinding } from '../rewrite/decide.ts';
import type { Decision } from '../rewrite/types.ts';
import { excerpt } from '../rules/evidence.ts';
import { loggedArguments, redactText } from './redact.ts';

export interface ExchangeHttp {
  /** HTTP status the client received. */
  status: number | undefined;
  /** How the response travelled: a JSON body, the POST's SSE stream, or a GET stream. */
  transport: 'json' | 'sse' | 'get-sse' | 'none';
  /** The proxy's own failure code, when the proxy answered instead of the server. */
  proxyError?: string;
  /** Why the proxy stopped waiting for a response: table full, idle too long, or its id reused by a new request. */
  expired?: 'capacity' | 'idle' | 'replaced';
  /** How tool arguments appear on the record (the policy's log.arguments; default redacted). */
  arguments?: 'off' | 'redacted' | 'full';
}

/** Where a finding was seen, for its log record. */
export interface FindingContext {
  method: string | undefined;
  id: unknown;
  tool: string | undefined;
  session: string | undefined;
  protocolVersion: string | undefined;
}

const round = (ms: number): number => Math.round(ms * 100) / 100;

/** The fields that say which exchange a record is about. */
const whereFields = (where: FindingContext) => ({
  method: where.method,
  id: where.id,
  tool: where.tool,
  session: where.session ?? null,
  protocolVersion: where.protocolVersion ?? null,
});

export function logFindings(
  logger: Logger,
  findings: readonly PolicedFinding[],
  where: FindingContext,
  applied: ReadonlySet<string> = NONE,
): void {
  for (const f of findings) {
    const record = {
      rule: f.rule,
      severity: f.severity,
      // Rules build evidence with excerpt(), already redacted; a message may quote a peer too.
      message: redactText(f.message),
      ...whereFields(where),
      pointer: f.pointer,
      evidence: redactText(f.evidence),
      fix: f.fix,
      action: f.action,
      applied: applied.has(f.rule),
    };
    if (f.severity === 'error') logger.warn(record, 'violation');
    else logger.info(record, 'violation');
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

/** Where an open request's findings belong. */
export const whereOf = (request: OpenRequest): FindingContext => ({
  method: request.method,
  id: request.id,
  tool: request.tool,
  session: request.sessionId,
  protocolVersion: request.protocolVersion,
});

const appliedRules = (decision: Decision | undefined): ReadonlySet<string> =>
  !decision || decision.kind === 'pass'
    ? NONE
    : new Set(decision.kind === 'mutate' ? [...decision.rules, ...decision.settled] : decision.rules);

export function logExchange(logger: Logger, c: Completed, http: ExchangeHttp): void {
  const { request } = c;
  const where = whereOf(request);
  logFindings(logger, c.findings, where, appliedRules(c.decision));
  if (c.decision) logDecision(logger, c.decision, where);
  logger.info(
    {
      method: request.method,
      id: request.id,
      tool: request.tool,
      arguments: loggedArguments(request.params, http.arguments ?? 'redacted'),
      from: request.from,
      session: request.sessionId ?? null,
      protocolVersion: request.protocolVersion ?? null,
      status: http.status,
      transport: http.transport,
      outcome: c.outcome,
      proxyError: http.proxyError,
      expired: http.expired,
      violations: request.findings.length + c.findings.length,
      verdict: c.decision?.kind === 'mutate' ? 'rewrite' : c.decision?.kind === 'reject' ? 'block' : undefined,
      durationMs: round(c.durationMs),
      requestBytes: request.requestBytes,
      responseBytes: c.responseBytes,
    },
    'exchange',
  );
}
