// A pino destination that keeps the JSON log lines in memory, for tests that assert on what the
// proxy logged. `createLogger({ destination: capture.stream })`.

export type LogRecord = Record<string, unknown>;
export type LogPredicate = (record: LogRecord) => boolean;

export interface LogCapture {
  /** A pino DestinationStream: pino calls write() with one or more `\n`-terminated JSON lines. */
  stream: { write(line: string): void };
  /** Parsed records in arrival order; a line that is not a JSON object is kept as `{ raw: line }`. */
  records: LogRecord[];
  find(pred: LogPredicate): LogRecord | undefined;
  /** Resolves with the first record (already seen or yet to come) that matches; rejects after timeoutMs listing what was seen. */
  waitFor(pred: LogPredicate, timeoutMs?: number): Promise<LogRecord>;
}

function parseLine(line: string): LogRecord {
  try {
    const v: unknown = JSON.parse(line);
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as LogRecord;
  } catch {
    // fall through: keep the raw text
  }
  return { raw: line };
}

export function createLogCapture(): LogCapture {
  const records: LogRecord[] = [];
  const waiters = new Set<(record: LogRecord) => void>();
  let pending = '';

  const stream = {
    write(chunk: string): void {
      pending += chunk;
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl).replace(/\r$/, '');
        pending = pending.slice(nl + 1);
        if (line.trim() === '') continue;
        const record = parseLine(line);
        records.push(record);
        for (const w of [...waiters]) w(record);
      }
    },
  };

  const find = (pred: LogPredicate): LogRecord | undefined => records.find(pred);

  const waitFor = (pred: LogPredicate, timeoutMs = 2000): Promise<LogRecord> => {
    const seen = find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const onRecord = (record: LogRecord): void => {
        if (!pred(record)) return;
        clearTimeout(timer);
        waiters.delete(onRecord);
        resolve(record);
      };
      const timer = setTimeout(() => {
        waiters.delete(onRecord);
        const listing = records.map((r, i) => `  ${i}: ${JSON.stringify(r)}`).join('\n');
        reject(
          new Error(`log-capture: no matching record within ${timeoutMs} ms; ${records.length} record(s) seen:\n${listing || '  (none)'}`),
        );
      }, timeoutMs);
      waiters.add(onRecord);
    });
  };

  return { stream, records, find, waitFor };
}
