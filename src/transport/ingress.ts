// Reads what a client sends to the MCP endpoint: the body, bounded, and the headers to forward.
import type { IncomingMessage, IncomingHttpHeaders } from 'node:http';
import { ProxyError } from '../errors.ts';
import { HOP_BY_HOP } from '../mcp/headers.ts';

/** Reads the whole request body; past maxBytes it stops reading and throws WARDEN_BODY_TOO_LARGE. */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    return Promise.reject(new ProxyError('WARDEN_BODY_TOO_LARGE', `Request body of ${declared} bytes exceeds the limit of ${maxBytes}`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        req.pause();
        reject(new ProxyError('WARDEN_BODY_TOO_LARGE', `Request body exceeds the limit of ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (err: Error): void => {
      cleanup();
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
  return new Set(value.split(',').map((t) => t.trim().toLowerCase()).filter(Boolean));
}
