// Real traffic for the report's tests: the demo's broken server behind the real proxy under the
// shipped audit.yaml (shadow: enforce.yaml, capture on), driven by several clients, each in its own
// session. What the proxy wrote is left in a log file and a capture file.
import { join } from 'node:path';
import { pino } from 'pino';
import { loadPolicyFile } from '../../src/config/load.ts';
import type { Policy } from '../../src/config/types.ts';
import { createClient } from '../../src/demo/client.ts';
import { startBrokenServer } from '../../src/demo/broken-server.ts';
import { createProxy } from '../../src/proxy/server.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { createLogger } from '../../src/sinks/logger.ts';

export const shipped = async (name: string): Promise<Policy> => {
  const loaded = await loadPolicyFile(new URL(`../../config/${name}`, import.meta.url).pathname, { rewritable: REWRITABLE });
  if (!loaded.ok) throw new Error(`config/${name} does not validate`);
  return loaded.policy;
};

/** The demo server's tools, each called with the arguments it takes (delete_everything is one it does not have). */
export const CALLS: Array<[string, Record<string, unknown>]> = [
  ['get_weather', { city: 'Paris' }],
  ['divide', { a: 1, b: 0 }],
  ['delete_everything', {}],
  ['export_report', {}],
  ['lookup_user', { id: 'u-42' }],
  ['send_email', { to: 'ops@example.com' }],
];

const CLIENTS = [
  { name: 'claude-desktop', version: '1.4.0' },
  { name: 'cursor', version: '0.52.1' },
  { name: 'cursor', version: '0.52.1' },
];

/** Each client's session through the proxy at `url`: initialize, tools/list, each tool `rounds` times (`pauseMs` apart), resources/list, DELETE. */
export async function driveTraffic(url: URL, rounds = 1, pauseMs = 0): Promise<void> {
  for (const clientInfo of CLIENTS) {
    const client = createClient(url);
    try {
      await client.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo });
      await client.notify('notifications/initialized');
      await client.request('tools/list');
      for (let i = 0; i < rounds; i++)
        for (const [name, args] of CALLS) {
          await client.request('tools/call', { name, arguments: args });
          if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
        }
      await client.request('resources/list');
      await client.end();
    } finally {
      await client.close();
    }
  }
}

/** Runs the traffic through a proxy that logs to a file; returns the log and capture paths. `rounds`: how many times each client calls each tool. */
export async function recordTraffic(dir: string, rounds = 1, pauseMs = 0): Promise<{ log: string; capture: string }> {
  const log = join(dir, 'proxy.log');
  const capture = join(dir, 'capture.jsonl');
  const destination = pino.destination({ dest: log, sync: true });
  const logger = createLogger({ destination });
  const audit = await shipped('audit.yaml');
  const server = await startBrokenServer();
  const proxy = await createProxy({
    upstream: server.url,
    logger,
    policy: () => ({ ...audit, capture: { path: capture } }),
    shadow: await shipped('enforce.yaml'),
  }).listen(0, '127.0.0.1');
  try {
    await driveTraffic(proxy.url, rounds, pauseMs);
  } finally {
    await proxy.close();
    await server.close();
    destination.flushSync();
  }
  return { log, capture };
}
