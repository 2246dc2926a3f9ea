// The part of autocannon 8's programmatic API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface Options {
      url: string;
      method?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      connections?: number;
      pipelining?: number;
      /** Seconds. */
      duration?: number;
      /** Replaces `[<id>]` in the request with a fresh id on every request. */
      idReplacement?: boolean;
      /** Seconds. */
      timeout?: number;
      requests?: RequestSpec[];
    }
    interface RequestSpec {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      /** Called before every request; returns the request to send. */
      setupRequest?: (req: RequestSpec, context: Record<string, unknown>) => RequestSpec;
    }
    interface Result {
      /** Seconds. */
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      '2xx': number;
      throughput: { average: number };
    }
    interface Instance extends EventEmitter, PromiseLike<Result> {
      stop(): void;
    }
  }
  function autocannon(opts: autocannon.Options): autocannon.Instance;
  export = autocannon;
}
