// A replica's shared state (RedisState) for the tests of a hostile or broken store: its log
// captured, each operation that gave nothing recorded as `op reason` (`read malformed`,
// `claim failed`, ...), closed after the file by `closers`.
import { createLogger } from '../../src/sinks/logger.ts';
import { RedisState } from '../../src/state/redis-state.ts';
import { createLogCapture, type LogCapture } from './log-capture.ts';

export interface TestState {
  state: RedisState;
  log: LogCapture;
  /** `op reason` for each operation that gave nothing, in order. */
  errors: string[];
}

export function testState(
  url: URL,
  closers: Array<() => Promise<unknown>>,
  options: { timeoutMs?: number; maxReadBytes?: number } = {},
): TestState {
  const log = createLogCapture();
  const errors: string[] = [];
  const state = new RedisState({
    url,
    ttlMs: 60_000,
    requestTtlMs: 60_000,
    timeoutMs: options.timeoutMs ?? 2_000,
    maxReadBytes: options.maxReadBytes,
    logger: createLogger({ destination: log.stream, level: 'debug' }),
    onError: (op, reason = 'failed') => errors.push(`${op} ${reason}`),
  });
  closers.push(() => state.close());
  return { state, log, errors };
}

/** Resolves once `errors` holds `count` entries (or after 2 s, for the caller's assertion to say what came). */
export async function counted(errors: readonly string[], count: number): Promise<void> {
  for (let i = 0; i < 200 && errors.length < count; i++) await new Promise((r) => setTimeout(r, 10));
}
