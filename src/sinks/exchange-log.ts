// Turns completed exchanges and stream ends into log records. Field names are an interface:
// dashboards and scripts read them (README, "Log records").
import type { Logger } from 'pino';
import type { Completed } from '../exchange/correlate.ts';

export interface ExchangeHttp {
  /** HTTP status the client received. */
  status: number | undefined;
  /** How the response travelled: a JSON body, the POST's SSE stream, or a GET stream. */
  transport: 'json' | 'sse' | 'get-sse' | 'none';
  /** The proxy's own failure code, when the proxy answered instead of the server. */
  proxyError?: string;
  /** Why the proxy stopped waiting for a response (open-request table full, or idle too long). */
  expired?: 'capacity' | 'idle';
}

const round = (ms: number): number => Math.round(ms * 100) / 100;

export function logExchange(logger: Logger, c: Completed, http: ExchangeHttp): void {
  const { request } = c;
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
      durationMs: round(c.durationMs),
      requestBytes: request.requestBytes,
      responseBytes: c.responseBytes,
    },
    'exchange',
  );
}
