// CPU of mcp-warden's own work on one small tools/call exchange, in-process and without sockets:
// decoding, flow, the pipeline on the request and on the response, the log records and metrics,
// the POST's rules. Hot and alone it shows the floor of the judging's cost, to set beside the CPU
// per request the proxy spends under load (ANALYSIS.md):
//   node --import tsx test/bench/judging.ts [exchanges=100000]
// BENCH_TRACES=1 adds an OpenTelemetry span per exchange (exported to a closed loopback port, so the
// export fails and costs nothing here): the cost of --otlp-endpoint, against the run without it.
import { Writable } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { decodeJson } from '../../src/codec/json-body.ts';
import { DEFAULT_LIMITS } from '../../src/config/defaults.ts';
import { Correlator } from '../../src/exchange/correlate.ts';
import { resolveFlow } from '../../src/exchange/flow.ts';
import { SessionStore } from '../../src/exchange/sessions.ts';
import { RequestTable } from '../../src/exchange/table.ts';
import { runFrame, type Frame, type StageContext } from '../../src/engine/stages.ts';
import { defaultPolicy } from '../../src/config/compile.ts';
import { runtimeFactory } from '../../src/config/runtime.ts';
import { police } from '../../src/rewrite/decide.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { logExchange, logFindings } from '../../src/sinks/exchange-log.ts';
import { createLogger } from '../../src/sinks/logger.ts';
import { Metrics } from '../../src/sinks/metrics.ts';
import { Tracing } from '../../src/sinks/tracing.ts';

const VERSION = '2025-11-25';
const SID = 'bench-session';
const logger = createLogger({ destination: new Writable({ write: (_c, _e, cb) => cb() }) as never, level: 'info' });
const sessions = new SessionStore(DEFAULT_LIMITS);
const table = new RequestTable(DEFAULT_LIMITS.maxOpenRequests, DEFAULT_LIMITS.requestIdleMs, () => {});
const correlator = new Correlator(table, sessions);
const metrics = new Metrics({ sessions: () => sessions.size, openRequests: () => table.size });
const policy = defaultPolicy(REWRITABLE);
const tracing = process.env.BENCH_TRACES
  ? Tracing.fromOptions({ endpoint: 'http://127.0.0.1:9/v1/traces', env: {}, version: 'bench' })
  : undefined;
const runtime = runtimeFactory(() => {})(policy);
const headers = {
  host: '127.0.0.1',
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-session-id': SID,
  'mcp-protocol-version': VERSION,
};
const session = sessions.open(`sid:${SID}`, SID, 0);
session.protocolVersion = VERSION;
sessions.addTools(
  session,
  [
    {
      name: 'small',
      inputSchema: { type: 'object', properties: { city: { type: 'string' }, units: { type: 'string' }, detail: { type: 'string' } } },
    },
  ],
  true,
  true,
);

const spent = new Map<string, number>();
let mark = 0;
const lap = (section: string): void => {
  const now = performance.now();
  spent.set(section, (spent.get(section) ?? 0) + now - mark);
  mark = now;
};

let seq = 0;
function exchange(n: number): void {
  mark = performance.now();
  const id = `b${n}`;
  const where = { method: 'tools/call', id, tool: 'small', session: SID, protocolVersion: VERSION };
  const body = Buffer.from(
    JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'small', arguments: { city: 'Paris', units: 'metric', detail: 'brief' } },
    }),
  );
  const decoded = decodeJson(body);
  const flow = resolveFlow(headers, decoded.ok ? decoded.payload.messages : [], sessions, ++seq, performance.now());
  lap('decode request, flow');
  const ctx: StageContext = { correlator, ...runtime, policy, now: performance.now() };
  const frame = (from: Frame['from'], bytes: Buffer, http: Frame['http'], known?: Frame['decoded']): Frame =>
    runFrame({ from, body: bytes, size: bytes.length, http, issuedSessionId: undefined, decoded: known, flow }, ctx);
  const inbound = frame('client', body, { status: undefined, contentType: undefined, transport: 'none' }, decoded);
  logFindings(logger, inbound.postFindings, where, 'post');
  for (const open of inbound.opened) logFindings(logger, open.verdict.findings, where, 'request');
  lap('pipeline: request');
  const reply = Buffer.from(
    JSON.stringify({
      jsonrpc: '2.0',
      id,
      result: { content: [{ type: 'text', text: `Paris: 18 C, light wind from the west, no rain expected today.${'.'.repeat(60)}` }] },
    }),
  );
  const answer = frame('server', reply, { status: 200, contentType: 'application/json', transport: 'json' });
  lap('pipeline: response');
  for (const c of answer.completed) logExchange(logger, c, { status: 200, transport: 'json' }, 'redacted');
  lap('log records');
  for (const c of answer.completed) metrics.exchange(c, 200, (tool) => flow.session.tools.has(tool));
  lap('metrics');
  for (const c of answer.completed) tracing?.exchange(c, { status: 200, transport: 'json' });
  lap('traces');
  const post = runtime.engine.evaluate(
    {
      kind: 'post',
      version: VERSION,
      requestHeaders: headers,
      request: decoded,
      status: 200,
      contentType: 'application/json',
      responseHeaders: { 'content-type': 'application/json' },
      response: answer.decoded,
      responseBytes: reply.length,
      session: flow.session,
    },
    'server',
  );
  logFindings(
    logger,
    police(post, policy, where, (r) => runtime.engine.groupOf(r)),
    where,
    'post',
  );
  lap('POST rules');
  if (answer.completed.length !== 1 || answer.completed[0]!.findings.length + post.length > 0)
    throw new Error(`the exchange was not a clean one: ${JSON.stringify(answer.completed[0]?.findings ?? post)}`);
}

const count = Number(process.argv[2] ?? 100_000);
const warmup = Math.min(20_000, count);
for (let n = 0; n < warmup; n++) exchange(n);
spent.clear();
const cpu0 = process.cpuUsage();
for (let n = warmup; n < warmup + count; n++) exchange(n);
const cpu = process.cpuUsage(cpu0);
process.stdout.write(
  `${count} small tools/call exchanges, hot, in-process: ${((cpu.user + cpu.system) / count).toFixed(1)} µs of CPU each (timing included)\n`,
);
for (const [section, ms] of spent) process.stdout.write(`  ${section.padEnd(24)} ${((ms * 1000) / count).toFixed(2)} µs\n`);
await tracing?.shutdown();
