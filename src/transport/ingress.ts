// Reads what a client sends to the MCP endpoint: the body, bounded, and the headers to forward.
import type { IncomingMessage, IncomingHttpHeaders } from 'node:http';
import { ProxyError } from '../errors.ts';
import { HOP_BY_HOP } from '../mcp/headers.ts';

/**
 * Request bodies held at once, over all exchanges: one 4 MiB body costs ~10 MB while it is read,
 * parsed and forwarded, so without a total 150 concurrent POSTs take 1.5 GB.
 */
export class BodyBudget {
  private held = 0;

  constructor(readonly maxBytes: number) {}

  get bytes(): number {
    return this.held;
  }

  /** Takes `n` bytes of the budget; false (nothing taken) when they do not fit. */
  take(n: number): boolean {
    if (this.held + n > this.maxBytes) return false;
    this.held += n;
    return true;
  }

  give(n: number): void {
    this.held -= n;
  }
}

const UNBOUNDED = new BodyBudget(Number.POSITIVE_INFINITY);

const overBudget = (budget: BodyBudget): ProxyError =>
  new ProxyError('WARDEN_OVERLOADED', `Request bodies held by the proxy reached the limit of ${budget.maxBytes} bytes; retry later`);

/**
 * Reads the whole request body; past maxBytes it stops reading and throws WARDEN_BODY_TOO_LARGE,
 * past the shared budget WARDEN_OVERLOADED. The bytes of a body it returns stay taken from the
 * budget: the caller gives them back when the exchange ends.
 */
export function readBody(req: IncomingMessage, maxBytes: number, budget: BodyBudget = UNBOUNDED): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    return Promise.reject(new ProxyError('WARDEN_BODY_TOO_LARGE', `Request body of ${declared} bytes exceeds the limit of ${maxBytes}`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const fail = (err: ProxyError): void => {
      cleanup();
      req.pause();
      budget.give(size);
      reject(err);
    };
    const onData = (chunk: Buffer): void => {
      if (size + chunk.length > maxBytes)
        return void fail(new ProxyError('WARDEN_BODY_TOO_LARGE', `Request body exceeds the limit of ${maxBytes} bytes`));
      if (!budget.take(chunk.length)) return void fail(overBudget(budget));
      size += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (err: Error): void => {
      cleanup();
      budget.give(size);
      reject(new ProxyError('WARDEN_BAD_REQUEST', err.message, { cause: err }));
    };
    const onAborted = (): void => onError(new Error('client closed the connection while sending'));
    const cleanup = (): void => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    };
    const onClose = (): void => {
      if (!req.complete) onAborted();
    };
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

/**
 * Headers to send upstream: end-to-end headers as they came (Host included), hop-by-hop ones (and
 * those the Connection header names) dropped, X-Forwarded-* added. content-length is left to
 * undici, which derives it from the body it sends; `expect` too, since node already answered
 * `100-continue` and undici refuses the header.
 */
export function upstreamHeaders(req: IncomingMessage): Record<string, string | string[]> {
  const headers = req.headers;
  const named = connectionTokens(headers);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name) || name === 'content-length' || name === 'expect') continue;
    out[name] = value;
  }
  const peer = req.socket.remoteAddress ?? '';
  const prior = headers['x-forwarded-for'];
  out['x-forwarded-for'] = prior ? `${Array.isArray(prior) ? prior.join(', ') : prior}, ${peer}` : peer;
  out['x-forwarded-proto'] = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  if (headers.host) out['x-forwarded-host'] = headers.host;
  return out;
}

/** Header names listed in a Connection header, which are hop-by-hop for this message. */
export function connectionTokens(headers: IncomingHttpHeaders | Record<string, unknown>): Set<string> {
  const value = headers.connection;
  if (typeof value !== 'string') return new Set();
  return new Set(
    value
      .split(',')
      .map((t) => t.trim().toLowerCase())
      .filter(Boolean),
  );
}
