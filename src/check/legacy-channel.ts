// `check` over the legacy HTTP+SSE transport (2024-11-05): one GET stream to the URL given, whose
// `endpoint` event names where the probes are POSTed (on the same origin, else the check stops: it
// contacts nothing but the server given). Each POST is accepted (202) and its answer read off the
// stream by id; a POST the server refuses is the answer itself.
import { Agent } from 'undici';
import { hasData, parseBlock } from '../codec/sse.ts';
import { SseSplitter } from '../codec/sse-splitter.ts';
import type { Via } from '../exchange/flow.ts';
import { type CheckChannel, type HttpAnswer, MessageQueue, type Outgoing, streamAnswer } from './channel.ts';
import { CheckHttp, failureOf, type HttpLimits } from './http.ts';

/** Messages kept between probes at most. */
const QUEUE = 1_000;

export class LegacySseChannel implements CheckChannel {
  via: Via | undefined;
  private readonly agent: Agent;
  private readonly queue = new MessageQueue(QUEUE);
  private endpoint: Promise<URL> | undefined;
  private stream: { destroy(): void } | undefined;

  constructor(
    readonly url: URL,
    private readonly limits: HttpLimits,
    private readonly deadline: AbortSignal,
  ) {
    // Two connections: the stream holds one for the whole run, the probes take turns on the other.
    this.agent = new Agent({ connect: { timeout: limits.connectTimeoutMs }, headersTimeout: limits.probeTimeoutMs, connections: 2 });
  }

  /** Opens the stream and reads the endpoint event; rejects with an HttpAnswer saying why it could not. */
  private open(): Promise<URL> {
    this.endpoint ??= (async () => {
      const started = performance.now();
      // The stream lasts the whole run: --probe-timeout bounds its opening (up to the endpoint event), the deadline all of it.
      const opening = new AbortController();
      const timer = setTimeout(
        () => opening.abort(new Error(`no endpoint event within ${this.limits.probeTimeoutMs} ms`)),
        this.limits.probeTimeoutMs,
      );
      try {
        const res = await this.agent.request({
          origin: this.url.origin,
          path: this.url.pathname + this.url.search,
          method: 'GET',
          headers: { accept: 'text/event-stream' },
          signal: AbortSignal.any([opening.signal, this.deadline]),
        });
        if (res.statusCode !== 200 || !String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
          await res.body.dump().catch(() => undefined);
          throw answerOf(`GET ${this.url.pathname} answered HTTP ${res.statusCode}, not an SSE stream`, started);
        }
        this.stream = res.body;
        return await this.read(res.body, started);
      } catch (err) {
        throw isAnswer(err) ? err : streamAnswer('sse', [], failureOf(err, opening.signal.aborted || this.deadline.aborted), started);
      } finally {
        clearTimeout(timer);
      }
    })();
    return this.endpoint;
  }

  /** Reads the stream in the background; resolves with the endpoint once its event came. */
  private read(body: AsyncIterable<Buffer>, started: number): Promise<URL> {
    return new Promise((resolve, reject) => {
      const splitter = new SseSplitter(this.limits.maxBytes);
      let found = false;
      const take = (pieces: ReturnType<SseSplitter['push']>) => {
        for (const piece of pieces) {
          if (piece.kind !== 'block') continue;
          const event = parseBlock(piece.raw);
          if (!hasData(event)) continue;
          if (event.event === 'endpoint' && !found) {
            const target = urlOf(event.data!.trim(), this.url);
            if (!target) return reject(answerOf(`the endpoint event is not a URL (${event.data!.slice(0, 80)})`, started));
            found = true;
            if (target.origin !== this.url.origin)
              return reject(answerOf(`the endpoint event names another origin (${target.origin}); not contacted`, started));
            const named = target.searchParams.get('sessionId') ?? target.searchParams.get('session_id');
            this.via = { wire: 'sse', session: target.pathname + target.search, sessionId: named ?? target.pathname + target.search };
            resolve(target);
          } else this.queue.push(event.data!);
        }
      };
      void (async () => {
        try {
          for await (const chunk of body) take(splitter.push(chunk));
          take(splitter.end());
          this.queue.end({ reason: 'reset', detail: 'the server ended the SSE stream' });
        } catch (err) {
          this.queue.end(failureOf(err, false));
        }
        // Settles the opening whatever ended the stream (a second reject is a no-op).
        if (!found) reject(answerOf('the SSE stream ended without an endpoint event', started));
      })();
    });
  }

  async send(out: Outgoing, bounded = true): Promise<HttpAnswer> {
    const started = performance.now();
    let endpoint: URL;
    try {
      endpoint = await this.open();
    } catch (answer) {
      return answer as HttpAnswer;
    }
    // No DELETE in this transport: a session ends with its stream.
    if (out.method === 'DELETE') return streamAnswer('sse', [], undefined, started);
    this.queue.clear();
    const post = new CheckHttp(endpoint, this.limits, this.deadline, this.agent);
    const accepted = await post.send(out, bounded);
    // Refused, or not sent at all: that is the answer. A notification has none to wait for.
    if (accepted.status === undefined || accepted.status >= 300 || out.awaitId === undefined) return accepted;
    const timeout = AbortSignal.timeout(this.limits.probeTimeoutMs);
    const { events, failure } = await this.queue.until(out.awaitId, bounded ? AbortSignal.any([timeout, this.deadline]) : timeout);
    return streamAnswer('sse', events, failure, started);
  }

  async close(): Promise<void> {
    this.stream?.destroy();
    await this.agent.destroy().catch(() => undefined);
  }
}

function urlOf(text: string, base: URL): URL | undefined {
  try {
    return new URL(text, base);
  } catch {
    return undefined;
  }
}

const isAnswer = (v: unknown): v is HttpAnswer => typeof v === 'object' && v !== null && 'durationMs' in v && 'truncated' in v;

/** The stream could not be opened: no probe could be sent (the GET's status is in `detail`). */
const answerOf = (detail: string, started: number): HttpAnswer => streamAnswer('sse', [], { reason: 'unreachable', detail }, started);
