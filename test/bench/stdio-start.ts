// What `mcp-warden stdio` adds to a server's start: the time from spawn to the answer to
// initialize, for server-everything alone and through mcp-warden (the built CLI, dist/), interleaved
// rounds, medians. Not a test (it times things): a measurement to rerun after a change.
//   npm run build && node --import tsx test/bench/stdio-start.ts [rounds=9]
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const SERVER = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const INITIALIZE = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
})}\n`;

/** Milliseconds from spawning `args` to the first line of stdout that answers id 1. */
async function startup(args: string[]): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'ignore'] });
  child.stdin.write(INITIALIZE);
  await new Promise<void>((resolve) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('"id":1')) resolve();
    });
  });
  const ms = performance.now() - started;
  child.kill();
  await new Promise((r) => child.once('close', r));
  return ms;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

const rounds = Math.min(50, Number(process.argv[2] ?? 9));
const direct: number[] = [];
const through: number[] = [];
for (let i = 0; i < rounds; i++) {
  direct.push(await startup([SERVER, 'stdio']));
  through.push(await startup([CLI, 'stdio', '--', process.execPath, SERVER, 'stdio']));
}
const [d, t] = [median(direct), median(through)];
process.stdout.write(
  `server alone ${d.toFixed(0)} ms, through mcp-warden stdio ${t.toFixed(0)} ms: added ${(t - d).toFixed(0)} ms (median of ${rounds})\n`,
);
