// A small SSE reader for tests that talk to a server with raw fetch: reads a response body and
// hands out events one at a time, with a timeout. Test-grade (LF, CRLF and CR line ends, comments
// skipped, an id-only block is kept as an event with data ''), not the proxy's splitter.

export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
  retry?: number;
}

export interface SseReader {
  /** The next event; rejects if none arrives within timeoutMs or the stream ends first. */
  next(timeoutMs?: number): Promise<SseEvent>;
  /** Reads events until one matches (inclusive), returning all of them. */
  until(pred: (e: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent[]>;
  /** Events left before the stream ends (resolves at end of stream). */
  rest(timeoutMs?: number): Promise<SseEvent[]>;
  /** Stops reading (cancels the body). */
  cancel(): Promise<void>;
}

export function sseReader(body: ReadableStream<Uint8Array> | null): SseReader {
  if (!body) throw new Error('sseReader: response has no body');
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const queue: SseEvent[] = [];
  let buffer = '';
  let ended = false;
  let block: SseEvent & { hasField: boolean } = { data: '', hasField: false };
  let dataLines: string[] = [];
  // One read in flight at a time, kept across timeouts so no chunk is lost.
  let inflight: ReturnType<typeof reader.read> | undefined;

  const dispatch = (): void => {
    if (block.hasField) {
      const e: SseEvent = { data: dataLines.join('\n') };
      if (block.id !== undefined) e.id = block.id;
      if (block.event !== undefined) e.event = block.event;
      if (block.retry !== undefined) e.retry = block.retry;
      queue.push(e);
    }
    block = { data: '', hasField: false };
    dataLines = [];
  };

  const feed = (text: string): void => {
    buffer += text;
    for (;;) {
      const m = /\r\n|\r|\n/.exec(buffer);
      if (!m) return;
      // A CR at the very end may be the first half of CRLF: wait for more.
      if (m[0] === '\r' && m.index === buffer.length - 1 && !ended) return;
      const line = buffer.slice(0, m.index);
      buffer = buffer.slice(m.index + m[0].length);
      if (line === '') {
        dispatch();
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      block.hasField = true;
      if (field === 'data') dataLines.push(value);
      else if (field === 'id') block.id = value;
      else if (field === 'event') block.event = value;
      else if (field === 'retry' && /^\d+$/.test(value)) block.retry = Number(value);
    }
  };

  const pump = async (deadline: number): Promise<void> => {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new Error('sseReader: timed out');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('sseReader: timed out')), remaining);
    });
    try {
      if (!inflight) {
        inflight = reader.read();
        inflight.catch(() => undefined); // an abort after a timeout must not become an unhandled rejection
      }
      const { value, done } = await Promise.race([inflight, timeout]);
      inflight = undefined;
      if (done) {
        ended = true;
        feed(decoder.decode());
      } else {
        feed(decoder.decode(value, { stream: true }));
      }
    } finally {
      clearTimeout(timer);
    }
  };

  const next = async (timeoutMs = 2000): Promise<SseEvent> => {
    const deadline = Date.now() + timeoutMs;
    while (queue.length === 0) {
      if (ended) throw new Error('sseReader: stream ended');
      await pump(deadline);
    }
    return queue.shift() as SseEvent;
  };

  return {
    next,
    async until(pred, timeoutMs = 2000) {
      const deadline = Date.now() + timeoutMs;
      const out: SseEvent[] = [];
      for (;;) {
        const e = await next(Math.max(1, deadline - Date.now()));
        out.push(e);
        if (pred(e)) return out;
      }
    },
    async rest(timeoutMs = 2000) {
      const deadline = Date.now() + timeoutMs;
      while (!ended) await pump(deadline);
      return queue.splice(0);
    },
    async cancel() {
      await reader.cancel().catch(() => undefined);
    },
  };
}
