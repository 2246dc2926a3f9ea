// Issue 11: load that reuses ONE JSON-RPC id on a session, as plain autocannon does (every request
// the same body), through mcp-warden in audit mode. Each POST carries its own request, so each is
// an exchange of its own: every delivered answer must be logged with its outcome (result), none as
// no-response or expired. Prints the exchange records' outcomes against the 2xx answers delivered;
// exits 1 if an answer was lost (results below the 2xx count, or any outcome but result, except
// client-closed for the requests still in flight when autocannon stopped, at most one per connection).
//   node --import tsx test/bench/id-reuse.ts [connections=10] [seconds=5]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { openSession } from './client.ts';
import { startTarget } from './setups.ts';
import { startFastUpstream } from './upstream.ts';

async function main(): Promise<void> {
  const connections = Number(process.argv[2] ?? 10);
  const seconds = Number(process.argv[3] ?? 5);
  const dir = mkdtempSync(join(tmpdir(), 'warden-id-reuse-'));
  const logFile = join(dir, 'proxy.log');
  const upstream = await startFastUpstream();
  const target = await startTarget('audit', upstream.url, { logFile });
  try {
    if (!target) throw new Error('no audit target');
    const headers = await openSession(target.url);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'small', arguments: { city: 'Paris' } } });
    const result = await autocannon({
      url: target.url.href,
      connections,
      duration: seconds,
      method: 'POST',
      headers: headers as Record<string, string>,
      body,
    });
    await target.stop();
    const outcomes: Record<string, number> = {};
    for (const line of readFileSync(logFile, 'utf8').split('\n')) {
      if (!line.includes('"msg":"exchange"')) continue;
      const record = JSON.parse(line) as { method?: string; id?: unknown; outcome?: string };
      if (record.method !== 'tools/call' || record.id !== 7) continue;
      outcomes[record.outcome ?? '?'] = (outcomes[record.outcome ?? '?'] ?? 0) + 1;
    }
    const delivered = result['2xx'];
    const logged = Object.values(outcomes).reduce((a, b) => a + b, 0);
    console.log(JSON.stringify({ connections, seconds, delivered, non2xx: result.non2xx, errors: result.errors, logged, outcomes }));
    const lost = logged - (outcomes.result ?? 0) - (outcomes['client-closed'] ?? 0);
    if ((outcomes.result ?? 0) < delivered || lost !== 0 || (outcomes['client-closed'] ?? 0) > connections) process.exitCode = 1;
  } finally {
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
