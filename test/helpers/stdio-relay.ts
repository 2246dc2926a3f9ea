// A StdioRelay on in-memory streams, no child process: what a test writes to `client.input` and
// `server.output` is relayed through a real Engine under `policy`; the log is captured.
import { PassThrough, type Writable } from 'node:stream';
import { DEFAULT_LIMITS, type Limits } from '../../src/config/defaults.ts';
import { runtimeFactory } from '../../src/config/runtime.ts';
import type { Policy } from '../../src/config/types.ts';
import { Engine } from '../../src/engine/engine.ts';
import { createLogger } from '../../src/sinks/logger.ts';
import { Metrics } from '../../src/sinks/metrics.ts';
import { StdioRelay } from '../../src/transport/stdio-relay.ts';
import { createLogCapture } from './log-capture.ts';

export function relayUnder(policy: Policy, limits: Partial<Limits>, clientOutput: Writable = new PassThrough()) {
  const full: Limits = { ...DEFAULT_LIMITS, ...limits };
  const log = createLogCapture();
  const logger = createLogger({ destination: log.stream, level: 'debug' });
  const engine = new Engine({ limits: full, runtime: runtimeFactory(() => {}), policy: () => policy, now: () => performance.now() });
  const metrics = new Metrics({ sessions: () => engine.sessions.size, openRequests: () => engine.openRequests });
  const client = { input: new PassThrough(), output: clientOutput };
  const server = { input: new PassThrough(), output: new PassThrough() };
  const relay = new StdioRelay({
    engine,
    sinks: {
      logger,
      metrics,
      capture: () => {
        throw new Error('no capture in this test');
      },
    },
    limits: full,
    logger,
    client,
    server,
    session: 'review',
  });
  return { relay, client, server, log };
}
