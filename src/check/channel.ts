// How `check` reaches a server: a channel sends one probe and returns what came back, shaped as an
// HttpAnswer. Streamable HTTP (http.ts) answers on the POST itself; the legacy HTTP+SSE transport
// (legacy-channel.ts) and stdio (stdio-channel.ts) answer on a stream of their own, where the
// messages are read as they come and a probe's answer is the one that carries its id.
import type { IncomingHttpHeaders } from 'node:http';
import { classify, idKey, type JsonRpcId } from '../codec/jsonrpc.ts';
import type { Via } from '../exchange/flow.ts';

export type FailureReason = 'timeout' | 'unreachable' | 'reset' | 'error';

export interface HttpAnswer {
  /** undefined when no response head arrived, or the answer came on a stream (`wire`). */
  status: number | undefined;
  /** How the answer travelled when not as the POST's own response: a legacy SSE session's stream, or a stdio child's stdout. */
  wire?: 'sse' | 'stdio';
  headers: IncomingHttpHeaders;
  /** Media type, lower case, without parameters. */
  contentType: string | undefined;
  /** The body as read (for SSE: the raw stream as read). */
  body: Buffer;
  /** SSE: the data of each complete event, in order. */
  events: string[] | undefined;
  /** The answer was cut at the byte cap. */
  truncated: boolean;
  /** Why the exchange did not complete, if it did not. */
  failure: { reason: FailureReason; detail: string } | undefined;
  durationMs: number;
}

export interface Outgoing {
  method: 'POST' | 'DELETE';
  headers: Record<string, string>;
  body: string | undefined;
  /** The id of the request the body carries: an SSE answer is left once its response arrived. */
  awaitId: JsonRpcId | undefined;
}

/** Whether a message's text is the response to `id`. */
export function answersId(data: string, id: JsonRpcId | undefined): boolean {
  if (id === undefined) return false;
  try {
    const m = classify(JSON.parse(data));
    return (m.kind === 'result' || m.kind === 'error') && m.id !== null && m.id !== undefined && idKey(m.id) === idKey(id);
  } catch {
    return false;
  }
}

export interface CheckChannel {
  /** The session a stream transport names (the judge scopes its correlation by it); undefined for Streamable HTTP. */
  readonly via: Via | undefined;
  /** Sends one request; `bounded: false` lets it run past the overall deadline (ending a session). */
  send(out: Outgoing, bounded?: boolean): Promise<HttpAnswer>;
  close(): Promise<void>;
}

/** An answer that came on a stream: no HTTP status of its own; `events`: the messages read while waiting. */
export const streamAnswer = (wire: 'sse' | 'stdio', events: string[], failure: HttpAnswer['failure'], started: number): HttpAnswer => ({
  status: undefined,
  wire,
  headers: {},
  contentType: undefined,
  body: Buffer.from(events.join('\n'), 'utf8'),
  events,
  truncated: false,
  failure,
  durationMs: Math.round(performance.now() - started),
});

/**
 * The messages a stream delivered, in order, and the probe waiting on one. Bounded: a stream that
 * floods between probes keeps only the last `max` messages.
 */
export class MessageQueue {
  private readonly pending: string[] = [];
  private waiter: (() => void) | undefined;
  private ended: HttpAnswer['failure'];

  constructor(private readonly max: number) {}

  push(message: string): void {
    this.pending.push(message);
    if (this.pending.length > this.max) this.pending.shift();
    this.waiter?.();
  }

  /** The stream is over: a probe still waiting gets `why`. */
  end(why: NonNullable<HttpAnswer['failure']>): void {
    this.ended ??= why;
    this.waiter?.();
  }

  get failure(): HttpAnswer['failure'] {
    return this.ended;
  }

  /** Drops what came before this probe (server notifications between probes belong to none). */
  clear(): void {
    this.pending.length = 0;
  }

  /** The messages up to and including the one answering `id`; what came, with the failure, when it ends or `signal` aborts first. */
  async until(id: JsonRpcId, signal: AbortSignal): Promise<{ events: string[]; failure: HttpAnswer['failure'] }> {
    const events: string[] = [];
    for (;;) {
      while (this.pending.length > 0) {
        const next = this.pending.shift()!;
        events.push(next);
        if (answersId(next, id)) return { events, failure: undefined };
      }
      if (this.ended) return { events, failure: this.ended };
      if (signal.aborted) return { events, failure: { reason: 'timeout', detail: 'no answer in time' } };
      await new Promise<void>((resolve) => {
        const done = () => {
          this.waiter = undefined;
          signal.removeEventListener('abort', done);
          resolve();
        };
        this.waiter = done;
        signal.addEventListener('abort', done, { once: true });
      });
    }
  }
}
