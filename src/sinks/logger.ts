// pino logger: JSON lines on stdout, one pretty line per record on a TTY (sinks/pretty.ts). Secrets are redacted by default where a
// record is built (sinks/redact.ts, redactTarget here); pino's redaction stays as a net for header
// objects only. Wildcard paths (`*.token`) made it walk every record: 26 µs a record against 4.
import { mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/** Header names whose values never reach a log line or a capture. */
export const SECRET_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key', 'x-auth-token'];

import { REDACTED } from '../redact/text.ts';
import { prettyStream } from './pretty.ts';

export { REDACTED };

const REDACT_PATHS = SECRET_HEADERS.flatMap((h) => [`headers["${h}"]`, `requestHeaders["${h}"]`, `responseHeaders["${h}"]`]);

/**
 * Lines are written in batches of 16 KB or every 250 ms, whichever comes first: one write per
 * record cost ~40 µs of CPU per exchange, one per 4 KiB ~4 µs more than one per 16 KB (sonic-boom's
 * largest write is 16 KiB). Pino flushes what is left when the process exits.
 */
export const LOG_DESTINATION = { dest: 1, sync: false, minLength: 16_000, periodicFlush: 250 };

export interface LoggerOptions {
  level?: string;
  /** One line per record for people (sinks/pretty.ts); defaults to whether stdout is a TTY. */
  pretty?: boolean;
  /** Where lines go (tests capture them); defaults to stdout. */
  destination?: DestinationStream;
  /** Fields every record carries (a worker's `worker` id). */
  fields?: Record<string, unknown>;
  /**
   * One write per record instead of batches: with --workers, every process writes to the same
   * stdout, and a write of one line under PIPE_BUF (4 KiB) is never split by another process's.
   */
  lineAtATime?: boolean;
}

/**
 * Lines to a file (created with its directory, opened at once so the first lines are never lost)
 * or a file descriptor (`stdio` keeps stdout for JSON-RPC), batched as on stdout; flushSync()
 * before exiting.
 */
export function logDestination(dest: string | number) {
  if (typeof dest === 'string') mkdirSync(dirname(dest), { recursive: true });
  return pino.destination({ ...LOG_DESTINATION, dest: typeof dest === 'string' ? openSync(dest, 'a') : dest });
}

let stampedMs = Number.NaN;
let stamp = '';

/**
 * pino's isoTime, made once per millisecond: under load several records share a millisecond, and
 * `toISOString` was ~1% of the proxy's CPU.
 */
export function isoTimeOncePerMs(): string {
  const now = Date.now();
  if (now !== stampedMs) {
    stampedMs = now;
    stamp = `,"time":"${new Date(now).toISOString()}"`;
  }
  return stamp;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const logger = buildLogger(options);
  if (writesPlainLines(logger)) lineWriters.add(logger);
  return logger;
}

function buildLogger(options: LoggerOptions): Logger {
  const base = {
    level: options.level ?? 'info',
    base: { name: 'mcp-warden', ...options.fields },
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    timestamp: isoTimeOncePerMs,
  };
  if (options.destination) return pino(base, options.destination);
  if (options.pretty ?? process.stdout.isTTY === true) return pino(base, prettyStream(process.stdout));
  return pino(base, pino.destination(options.lineAtATime ? { ...LOG_DESTINATION, minLength: 0 } : LOG_DESTINATION));
}

const { lsCacheSym, timeSym, chindingsSym, streamSym, endSym, needsMetadataGsym } = pino.symbols;
type PinoInternals = Record<symbol, unknown> & Logger;

/**
 * Loggers whose info line infoRecord may write itself: built by createLogger (no mixin, formatter,
 * hook, serializer or prefix; its redaction covers header keys, which no info record has), with
 * pino's internals where infoRecord reads them and no multistream waiting for metadata. A logger
 * passed to createProxy is not one: pino applies whatever it was built with.
 */
const lineWriters = new WeakSet<Logger>();
function writesPlainLines(logger: Logger): boolean {
  const l = logger as PinoInternals;
  const stream = l[streamSym] as Record<symbol, unknown> | undefined;
  return (
    typeof (l[lsCacheSym] as Record<number, string> | undefined)?.[30] === 'string' &&
    typeof l[timeSym] === 'function' &&
    typeof l[chindingsSym] === 'string' &&
    typeof l[endSym] === 'string' &&
    stream !== undefined &&
    stream[needsMetadataGsym] !== true
  );
}

/**
 * An info record whose values are plain JSON (no secrets by key: built redacted), written as pino
 * writes it, in one JSON.stringify instead of pino's walk over its keys (3.5 against 1.4 µs per
 * exchange record; the same line: test/unit/log-line.property.test.ts). A logger not among
 * lineWriters logs it itself.
 */
export function infoRecord(logger: Logger, record: Record<string, unknown>, msg: string): void {
  if (!logger.isLevelEnabled('info')) return;
  if (!lineWriters.has(logger)) return void logger.info(record, msg);
  const l = logger as PinoInternals;
  const json = JSON.stringify(record);
  const fields = json.length > 2 ? `,${json.slice(1, -1)}` : '';
  const line = `${(l[lsCacheSym] as Record<number, string>)[30]}${(l[timeSym] as () => string)()}${l[chindingsSym] as string}${fields},"msg":${JSON.stringify(msg)}${l[endSym] as string}`;
  (l[streamSym] as { write(line: string): void }).write(line);
}

// Request targets are redacted by the one redaction module (query names and value shapes); kept
// here for the callers that import it from the logger.
export { redactTarget } from './redact.ts';
