// The requests a benchmark client is waiting on, each matched to its answer by id and given up
// after `timeoutMs` (checked every 500 ms); a failure of the channel fails them all, and every later one.
import { performance } from 'node:perf_hooks';

export interface RpcMessage {
  id?: unknown;
  method?: string;
  result?: unknown;
  error?: unknown;
}

interface Waiting {
  at: number;
  resolve(m: RpcMessage): void;
  reject(e: Error): void;
}

export class AwaitedAnswers {
  private readonly waiting = new Map<number, Waiting>();
  private readonly watchdog: NodeJS.Timeout;
  /** Why the channel failed, if it did. */
  failed: Error | undefined;

  constructor(timeoutMs: number, noAnswer: (id: number) => string) {
    this.watchdog = setInterval(() => {
      const now = performance.now();
      for (const [id, w] of this.waiting)
        if (now - w.at > timeoutMs) {
          this.waiting.delete(id);
          w.reject(new Error(noAnswer(id)));
        }
    }, 500);
    this.watchdog.unref();
  }

  /** The answer to request `id`, once it comes. */
  wait(id: number): Promise<RpcMessage> {
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => this.waiting.set(id, { at: performance.now(), resolve, reject }));
  }

  /** A message read: the answer of a request waiting on it, if it is one. */
  settle(msg: RpcMessage): void {
    if (typeof msg.id !== 'number' || msg.method !== undefined) return;
    const w = this.waiting.get(msg.id);
    if (!w) return;
    this.waiting.delete(msg.id);
    w.resolve(msg);
  }

  forget(id: number): void {
    this.waiting.delete(id);
  }

  fail(err: Error): void {
    this.failed ??= err;
    for (const w of this.waiting.values()) w.reject(err);
    this.waiting.clear();
  }

  stop(): void {
    clearInterval(this.watchdog);
  }
}
