// The HTTP side of `mcp-warden check`: one undici Agent with connect, header and body timeouts,
// one request at a time, only to the URL given. Redirects are reported, never followed (undici 7's
// Agent follows none unless a redirect interceptor is composed, and none is). Every answer is read
// up to a byte cap; an SSE answer is read event by event and left as soon as the response to the
// probe's request has arrived. Nothing here throws: a failure is a value.
import type { IncomingHttpHeaders } from 'node:http';
import { Agent, errors as undiciErrors } from 'undici';
import type { JsonRpcId } from '../codec/jsonrpc.ts';
import { hasData, parseBlock } from '../codec/sse.ts';
import { SseSplitter } from '../codec/sse-splitter.ts';
import { answersId, type CheckChannel, type FailureReason, type HttpAnswer, type Outgoing } from './channel.ts';

export interface HttpLimits {
  connectTimeoutMs: number;
  /** Longest a probe may take, headers and body together. */
  probeTimeoutMs: number;
  /** Bytes read from one answer; the rest is dropped unread. */
  maxBytes: number;
}

export type { FailureReason, HttpAnswer, Outgoing };

const mediaType = (headers: IncomingHttpHeaders): string | undefined => {
  const raw = headers['content-type'];
  const value = (Array.isArray(raw) ? raw[0] : raw)?.split(';')[0]?.trim().toLowerCase();
  return value || undefined;
};

export function failureOf(err: unknown, timedOut: boolean): { reason: FailureReason; detail: string } {
  const code = (err as { code?: string }).code ?? '';
  const detail = err instanceof Error ? err.message : String(err);
  if (
    timedOut ||
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError ||
    err instanceof undiciErrors.ConnectTimeoutError ||
    code === 'ETIMEDOUT'
  ) {
    return { reason: 'timeout', detail };
  }
  if (['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'EAI_AGAIN', 'ENETUNREACH'].includes(code))
    return { reason: 'unreachable', detail: `${code}: ${detail}` };
  if (err instanceof undiciErrors.SocketError || code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET')
    return { reason: 'reset', detail };
  return { reason: 'error', detail };
}

export class CheckHttp implements CheckChannel {
  readonly via = undefined;

  private readonly agent: Agent;

  constructor(
    readonly url: URL,
    private readonly limits: HttpLimits,
    /** Aborted when the overall deadline passes. */
    private readonly deadline: AbortSignal,
    /** Another channel's agent to send on (its connections, its close). */
    private readonly shared?: Agent,
  ) {
    this.agent =
      shared ??
      new Agent({
        connect: { timeout: limits.connectTimeoutMs },
        headersTimeout: limits.probeTimeoutMs,
        bodyTimeout: limits.probeTimeoutMs,
        connections: 1,
        pipelining: 1,
      });
  }

  /** Sends one request; `bounded: false` lets it run past the overall deadline (ending a session). */
  async send(out: Outgoing, bounded = true): Promise<HttpAnswer> {
    const started = performance.now();
    const timeout = AbortSignal.timeout(this.limits.probeTimeoutMs);
    const signal = bounded ? AbortSignal.any([timeout, this.deadline]) : timeout;
    const answer: HttpAnswer = {
      status: undefined,
      headers: {},
      contentType: undefined,
      body: Buffer.alloc(0),
      events: undefined,
      truncated: false,
      failure: undefined,
      durationMs: 0,
    };
    try {
      const res = await this.agent.request({
        origin: this.url.origin,
        path: this.url.pathname + this.url.search,
        method: out.method,
        headers: out.headers,
        body: out.body,
        signal,
      });
      answer.status = res.statusCode;
      answer.headers = res.headers as IncomingHttpHeaders;
      answer.contentType = mediaType(answer.headers);
      await this.read(res.body, answer, out.awaitId);
    } catch (err) {
      answer.failure = failureOf(err, signal.aborted);
    }
    answer.durationMs = Math.round(performance.now() - started);
    return answer;
  }

  /** Reads the body up to the cap; an SSE body only until the awaited response arrived. */
  private async read(body: AsyncIterable<Buffer> & { destroy(): void }, answer: HttpAnswer, awaitId: JsonRpcId | undefined): Promise<void> {
    const sse = answer.contentType === 'text/event-stream';
    const splitter = sse ? new SseSplitter(this.limits.maxBytes) : undefined;
    if (sse) answer.events = [];
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    try {
      for await (const chunk of body) {
        const room = this.limits.maxBytes - size;
        const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
        chunks.push(kept);
        size += kept.length;
        if (splitter) done = this.events(splitter.push(kept), answer, awaitId);
        if (chunk.length > room) answer.truncated = true;
        if (done || answer.truncated) break;
      }
      if (splitter && !done) this.events(splitter.end(), answer, awaitId);
    } finally {
      // Leaving early (response seen, cap reached, failure) must free the connection.
      body.destroy();
      answer.body = Buffer.concat(chunks, size);
    }
  }

  private events(pieces: ReturnType<SseSplitter['push']>, answer: HttpAnswer, awaitId: JsonRpcId | undefined): boolean {
    let done = false;
    for (const piece of pieces) {
      if (piece.kind !== 'block') continue;
      const event = parseBlock(piece.raw);
      if (!hasData(event)) continue;
      answer.events!.push(event.data!);
      if (answersId(event.data!, awaitId)) done = true;
    }
    return done;
  }

  async close(): Promise<void> {
    if (!this.shared) await this.agent.destroy().catch(() => undefined);
  }
}
