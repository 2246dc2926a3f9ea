// Starts the real proxy in front of an upstream on 127.0.0.1:0 with its log captured in memory.
import { createProxy, type Proxy as WardenProxy, type ProxyOptions, type RunningProxy } from '../../src/proxy/server.ts';
import { createLogger } from '../../src/sinks/logger.ts';
import { createLogCapture, type LogCapture, type LogRecord } from './log-capture.ts';

export interface TestProxy extends RunningProxy {
  log: LogCapture;
  /** What the proxy remembers of sessions. */
  sessions: WardenProxy['sessions'];
  metrics: WardenProxy['metrics'];
  /** The `msg:"exchange"` records so far. */
  exchanges(): LogRecord[];
}

export async function startProxy(upstream: URL, options: Omit<ProxyOptions, 'upstream' | 'logger'> = {}): Promise<TestProxy> {
  const log = createLogCapture();
  const logger = createLogger({ destination: log.stream, level: 'debug' });
  const proxy = createProxy({ upstream, logger, ...options });
  const running = await proxy.listen(0, '127.0.0.1');
  return {
    ...running,
    log,
    sessions: proxy.sessions,
    metrics: proxy.metrics,
    exchanges: () => log.records.filter((r) => r.msg === 'exchange'),
  };
}
