// An opt-in capture of exchanges as JSON lines, for `mcp-warden replay`: each completed exchange
// with what it takes to judge it again offline. Secrets never reach it: credential headers are
// left out, tool argument strings are replaced, and values under credential names and
// credential-shaped text are masked at any depth (src/redact/: past its bounds, a marker). What the
// rules read of the replaced arguments is kept as facts that hold none of them (rules/request-facts.ts).
import { createWriteStream, type WriteStream } from 'node:fs';
import type { Logger } from 'pino';
import type { Completed } from '../exchange/correlate.ts';
import { H } from '../mcp/headers.ts';
import { requestFacts } from '../rules/request-facts.ts';
import type { ExchangeSubject, RequestFacts } from '../rules/types.ts';
import { hideText, loggedHeaders, maskSecrets } from './redact.ts';

export const CAPTURE_VERSION = 1;

/** One line of a capture file. */
export interface CaptureRecord {
  v: typeof CAPTURE_VERSION;
  time: string;
  session: string | null;
  /** The transport when not Streamable HTTP: a legacy SSE session's (`session` is its id) or stdio's (one session per child). */
  wire?: 'sse' | 'stdio';
  protocolVersion: string | null;
  request: {
    from: 'client' | 'server';
    headers: Record<string, string>;
    message: unknown;
    /** What the rules read of the request's redacted content (absent in captures of mcp-warden before it: replayed from the redacted request). */
    facts?: RequestFacts;
  };
  response: {
    outcome: string;
    status: number | null;
    contentType: string | null;
    transport: ExchangeSubject['transport'];
    message: unknown;
    bodyProblem: ExchangeSubject['bodyProblem'] | null;
    unmatched: unknown[];
    proxyError: string | null;
  };
}

/** Request headers a replay needs (the protocol's own); credentials are never among them. */
const KEPT_HEADERS = [H.sessionId, H.protocolVersion, H.method, H.name, 'content-type', 'accept'];

export function captureRecord(c: Completed, subject: ExchangeSubject, time: Date): CaptureRecord {
  const { request } = c;
  const params = request.params as Record<string, unknown> | undefined;
  const safeParams =
    params && typeof params === 'object' && 'arguments' in params ? { ...params, arguments: hideText(params.arguments) } : params;
  const kept: Record<string, string> = {};
  for (const [name, v] of Object.entries(request.headers))
    if ((KEPT_HEADERS.includes(name) || name.startsWith(H.paramPrefix)) && typeof v === 'string') kept[name] = v;
  // Mcp-Param-* values are tool arguments: hidden, as the arguments are.
  const headers = loggedHeaders(kept) as Record<string, string>;
  const message = c.response ? maskSecrets(c.response.value) : null;
  return {
    v: CAPTURE_VERSION,
    time: time.toISOString(),
    session: request.sessionId ?? null,
    ...(subject.wire === 'sse' || subject.wire === 'stdio' ? { wire: subject.wire } : {}),
    protocolVersion: request.protocolVersion ?? null,
    request: {
      from: request.from,
      headers,
      message: maskSecrets({ jsonrpc: '2.0', id: request.id, method: request.method, params: safeParams }),
      facts: requestFacts(subject, message),
    },
    response: {
      outcome: c.outcome,
      status: subject.status ?? null,
      contentType: subject.contentType ?? null,
      transport: subject.transport,
      message,
      bodyProblem: subject.bodyProblem ?? null,
      unmatched: subject.unmatched.map((m) => maskSecrets(m.value)),
      proxyError: subject.proxyError ?? null,
    },
  };
}

/** Appends capture records to a file; never blocks or throws into the traffic. */
export class CaptureSink {
  private readonly stream: WriteStream;
  private failed = false;

  constructor(
    readonly path: string,
    logger: Logger,
  ) {
    this.stream = createWriteStream(path, { flags: 'a' });
    this.stream.on('error', (err) => {
      if (!this.failed) logger.error({ err, path }, 'capture failed; exchanges are no longer captured');
      this.failed = true;
    });
  }

  write(record: CaptureRecord): void {
    if (!this.failed) this.stream.write(`${JSON.stringify(record)}\n`);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.stream.end(resolve));
  }
}
