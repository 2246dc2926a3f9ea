// Turns completed exchanges, their findings and stream ends into log records. Field names are an
// interface: dashboards and scripts read them (README, "Log records").
import type { Logger } from 'pino';
import type { Completed } from '../exchange/correlate.ts';
import type { Finding } from '../rules/types.ts';

export interface ExchangeHttp {
  /** HTTP status the client received. */
  status: number | undefined;
  /** How the response travelled: a JSON body, the POST's SSE stream, or a GET stream. */
  transport: 'json' | 'sse' | 'get-sse' | 'none';
  /** The proxy's own failure code, when the proxy answered instead of the server. */
  proxyError?: string;
  /** Why the proxy stopped waiting for a response: table full, idle too long, or its id reused by a new request. */
  expired?: 'capacity' | 'idle' | 'replaced';
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

export function logFindings(logger: Logger, findings: readonly Finding[], where: FindingContext): void {
  for (const f of findings) {
    const record = {
      rule: f.rule,
      severity: f.severity,
      message: f.message,
      method: where.method,
      id: where.id,
      tool: where.tool,
      session: where.session ?? null,
      protocolVersion: where.protocolVersion ?? null,
      pointer: f.pointer,
      evidence: f.evidence,
      fix: f.fix,
    };
    if (f.severity === 'error') logger.warn(record, 'violation');
    else logger.info(record, 'violation');
  }
}

export function logExchange(logger: Logger, c: Completed, http: ExchangeHttp): void {
  const { request } = c;
  logFindings(logger, c.findings, {
    method: request.method,
    id: request.id,
    tool: request.tool,
    session: request.sessionId,
    protocolVersion: request.protocolVersion,
  });
  logger.info(
    {
      method: request.method,
      id: request.id,
      tool: request.tool,
      from: request.from,
      session: request.sessionId ?? null,
      protocolVersion: request.protocolVersion ?? null,
      status: http.status,
      transport: http.transport,
      outcome: c.outcome,
      proxyError: http.proxyError,
      expired: http.expired,
      violations: c.findings.length,
      durationMs: round(c.durationMs),
      requestBytes: request.requestBytes,
      responseBytes: c.responseBytes,
    },
    'exchange',
  );
}
