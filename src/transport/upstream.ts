// Talks to the upstream MCP server through undici. The proxy owns both bodies: the request body is
// sent from the bytes it read, the response body is handed back as a stream. Failures become
// ProxyErrors with stable codes.
import { Agent, errors as undiciErrors } from 'undici';
import type { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { ProxyError } from '../errors.ts';
import type { Limits } from '../config/defaults.ts';

export interface UpstreamRequest {
  method: 'GET' | 'POST' | 'DELETE';
  /** Path and query on the upstream. */
  path: string;
  headers: Record<string, string | string[]>;
  body: Buffer | undefined;
  /** Aborts the request when it fires 'abort' (an AbortSignal, or an EventEmitter with `aborted`). */
  signal: AbortSignal | EventEmitter;
  /** Long-lived streams (GET) must not time out between events. */
  longLived: boolean;
  /** What the upstream's time is recorded under: the POST's first JSON-RPC method, or GET, DELETE. */
  timedAs: string;
}

export interface UpstreamResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Readable;
}

export class Upstream {
  private readonly agent: Agent;

  constructor(
    readonly url: URL,
    private readonly limits: Pick<Limits, 'upstreamHeadersTimeoutMs' | 'upstreamBodyTimeoutMs' | 'upstreamConnectTimeoutMs'>,
    /** 'client': the client's Host goes upstream as it came (the upstream's DNS-rebinding check needs it); 'upstream': undici sends the upstream's. */
    private readonly hostHeader: 'client' | 'upstream' = 'client',
    /** Told the upstream's own time to each response's headers (seconds). */
    private readonly answeredIn: (timedAs: string, seconds: number) => void = () => {},
  ) {
    this.agent = new Agent({
      connect: { timeout: limits.upstreamConnectTimeoutMs },
      headersTimeout: limits.upstreamHeadersTimeoutMs,
      bodyTimeout: limits.upstreamBodyTimeoutMs,
    });
  }

  async request(req: UpstreamRequest): Promise<UpstreamResponse> {
    const sent = performance.now();
    try {
      const res = await this.agent.request({
        origin: this.url.origin,
        path: req.path,
        method: req.method,
        headers: this.hostHeader === 'client' ? req.headers : withoutHost(req.headers),
        body: req.body,
        signal: req.signal,
        bodyTimeout: req.longLived ? 0 : this.limits.upstreamBodyTimeoutMs,
      });
      this.answeredIn(req.timedAs, (performance.now() - sent) / 1000);
      return { status: res.statusCode, headers: res.headers as IncomingHttpHeaders, body: res.body };
    } catch (err) {
      throw toProxyError(err);
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

function withoutHost(headers: Record<string, string | string[]>): Record<string, string | string[]> {
  const { host: _host, ...rest } = headers;
  return rest;
}

/** Maps what undici or the socket threw to the proxy's own error codes. */
export function toProxyError(err: unknown): ProxyError {
  if (err instanceof ProxyError) return err;
  const code = (err as { code?: string }).code ?? '';
  if (
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError ||
    err instanceof undiciErrors.ConnectTimeoutError ||
    code === 'ETIMEDOUT'
  ) {
    return new ProxyError('WARDEN_UPSTREAM_TIMEOUT', undefined, { cause: err });
  }
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH' || code === 'EAI_AGAIN') {
    return new ProxyError('WARDEN_UPSTREAM_UNREACHABLE', undefined, { cause: err });
  }
  // A response node cannot parse (garbage status line, bad header bytes, headers over 16 KiB,
  // duplicate Content-Length) is the upstream's fault, not the proxy's.
  if (
    err instanceof undiciErrors.HTTPParserError ||
    err instanceof undiciErrors.HeadersOverflowError ||
    err instanceof undiciErrors.ResponseContentLengthMismatchError ||
    code.startsWith('HPE_')
  ) {
    return new ProxyError('WARDEN_UPSTREAM_PROTOCOL', `Upstream MCP server sent a malformed HTTP response: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (err instanceof undiciErrors.SocketError || code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET') {
    return new ProxyError('WARDEN_UPSTREAM_RESET', undefined, { cause: err });
  }
  return new ProxyError('WARDEN_INTERNAL', (err as Error)?.message, { cause: err });
}
