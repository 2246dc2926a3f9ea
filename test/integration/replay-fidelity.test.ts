// Replay is the live proxy offline: sessions of the official SDK client recorded through a live
// proxy with capture on, then the capture replayed under the policy it was recorded with. The
// replay must judge and decide as the proxy did (rule, where, action; every rewrite and block),
// and `mcp-warden report` on the capture must count what it counts on the live log, although the
// capture keeps none of the tool arguments' text: what the rules read of them is kept as facts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replayFile } from '../../src/commands/replay.ts';
import { loadPolicyFile } from '../../src/config/load.ts';
import type { Policy } from '../../src/config/types.ts';
import type { ReplayReport } from '../../src/replay/replay.ts';
import { ReportReader } from '../../src/report/reader.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import type { RequestFacts } from '../../src/rules/types.ts';
import { startEverythingServer } from '../fixtures/everything-server.ts';
import { startRawServer } from '../fixtures/raw-server.ts';
import type { LogRecord } from '../helpers/log-capture.ts';
import { startProxy } from '../helpers/proxy.ts';
import { liveJudgements, replayedJudgements } from '../helpers/replay-compare.ts';
import { connectSdkClient, type SdkClientHandle } from '../helpers/sdk-client.ts';

interface Recorded {
  records: LogRecord[];
  capture: string;
  report: ReplayReport;
}

/** `policy` with capture on, into `dir`. */
async function capturing(dir: string, name: string): Promise<Policy> {
  const loaded = await loadPolicyFile('config/enforce.yaml', { rewritable: REWRITABLE });
  assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.errors));
  return { ...loaded.policy, capture: { path: join(dir, `${name}.jsonl`) } };
}

/** One SDK client session through a live proxy under `policy` (capture on), then the capture replayed under the same policy. */
async function record(upstream: URL, policy: Policy, session: (c: SdkClientHandle) => Promise<void>): Promise<Recorded> {
  const proxy = await startProxy(upstream, { policy: () => policy });
  try {
    const c = await connectSdkClient(proxy.url);
    try {
      await session(c);
      await c.transport.terminateSession();
    } finally {
      await c.close();
    }
  } finally {
    // Closing the proxy flushes the capture.
    await proxy.close();
  }
  const path = policy.capture!.path;
  return { records: proxy.log.records, capture: await readFile(path, 'utf8'), report: await replayFile(path, policy) };
}

/** The report's findings (by severity, and by rule for the rules a replay judges) over `lines`: a log's or a capture's. */
function reportCounts(lines: readonly string[], policy: Policy, judged: ReadonlySet<string>) {
  const reader = new ReportReader(policy);
  for (const line of lines) reader.line(line);
  const data = reader.data(['test']);
  const rules = data.rules.filter((r) => judged.has(r.rule));
  return { findings: data.summary.findings, rules: Object.fromEntries(rules.map((r) => [r.rule, r.count])) };
}

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'warden-replay-fidelity-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('server-everything under config/enforce.yaml, live and replayed from its capture', () => {
  let policy: Policy;
  let rec: Recorded;
  before(async () => {
    policy = await capturing(dir, 'everything');
    const server = await startEverythingServer();
    try {
      rec = await record(server.url, policy, async (c) => {
        await c.client.listTools();
        await c.client.callTool({ name: 'echo', arguments: { message: 'hello' } });
        await c.client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } });
        await c.client.callTool({ name: 'get-sum', arguments: { a: 'two', b: 3 } });
        await c.client.callTool({ name: 'get-structured-content', arguments: { location: 'New York' } });
        // Answers "Error: Operation failed" because it was asked to: no silent failure, live or replayed.
        const annotated = await c.client.callTool({
          name: 'get-annotated-message',
          arguments: { messageType: 'error', includeImage: false },
        });
        assert.equal(annotated.isError, undefined, 'the live proxy leaves the asked-for error alone');
        // enforce.yaml turns the server's isError into the -32602 the spec asks for.
        await assert.rejects(c.client.callTool({ name: 'no_such_tool', arguments: {} }), /-32602/);
        const { resources } = await c.client.listResources();
        await c.client.readResource({ uri: resources[0]!.uri });
        await c.client.ping();
      });
    } finally {
      await server.close();
    }
  });

  test('the replay makes the findings and decisions the live proxy made, and no others', () => {
    const live = liveJudgements(rec.records, new Set(rec.report.coverage.judged.rules));
    assert.ok(live.decisions.length > 0, 'enforce.yaml rewrote something live');
    assert.deepEqual(replayedJudgements(rec.report), live);
    const annotated = rec.report.exchanges.find((x) => x.tool === 'get-annotated-message');
    assert.deepEqual(annotated?.findings, []);
    assert.deepEqual(annotated?.decision, { kind: 'pass' });
  });

  test('report on the capture counts what report on the live log counts', () => {
    const judged = new Set(rec.report.coverage.judged.rules);
    const log = rec.records.map((r) => JSON.stringify(r));
    const fromLog = reportCounts(log, policy, judged);
    assert.ok(Object.keys(fromLog.rules).length > 0, 'the live log has findings');
    assert.deepEqual(reportCounts(rec.capture.split('\n'), policy, judged), fromLog);
  });
});

/** Secrets a client put in tool arguments. */
const PASSWORD = 'hunter2';
const AWS_KEY = 'AKIAIOSFODNN7EXAMPLE';
const MODE = 'sekrit-mode-value';

const TOOLS = [
  {
    name: 'open_file',
    description: 'Opens a file on the server',
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string' }, password: { type: 'string' }, aws_key: { type: 'string' } },
      required: ['path'],
    },
  },
  {
    name: 'query_store',
    description: 'Queries the store',
    inputSchema: { type: 'object', properties: { filter: { type: 'string' }, token: { type: 'string' } } },
  },
  {
    name: 'run_command',
    description: 'Runs a shell command',
    inputSchema: { type: 'object', properties: { command: { type: 'string' }, password: { type: 'string' } } },
  },
  {
    name: 'set_mode',
    description: 'Sets the mode',
    inputSchema: { type: 'object', properties: { mode: { enum: ['read', 'write'] } }, required: ['mode'] },
  },
];

/** A scripted 2025-11-25 server: its answers hinge on what the arguments say, as a real server's do. */
async function startScriptedServer() {
  return startRawServer((req, res, body) => {
    const json = (value: unknown, headers: Record<string, string> = {}) =>
      void res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value));
    if (req.method !== 'POST') return void res.writeHead(req.method === 'DELETE' ? 200 : 405).end();
    const msg = JSON.parse(body.toString('utf8')) as {
      id?: number;
      method: string;
      params?: { name?: string; arguments?: Record<string, string> };
    };
    const answer = (result: unknown) => json({ jsonrpc: '2.0', id: msg.id, result });
    const text = (t: string, isError?: true) => answer({ content: [{ type: 'text', text: t }], ...(isError ? { isError } : {}) });
    switch (msg.method) {
      case 'initialize':
        return json(
          {
            jsonrpc: '2.0',
            id: msg.id,
            result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'scripted', version: '1.0.0' } },
          },
          { 'mcp-session-id': 'scripted-1' },
        );
      case 'notifications/initialized':
        return void res.writeHead(202).end();
      case 'tools/list':
        return answer({ tools: TOOLS });
      case 'tools/call': {
        const args = msg.params?.arguments ?? {};
        // The server repeats the path the client sent: the client's own words, no leak.
        if (msg.params?.name === 'open_file') return text(`Error: cannot open ${args.path}: permission denied`, true);
        // Failures are what the filter asked for: the answer, not a silent failure.
        if (msg.params?.name === 'query_store')
          return text(`Error: disk quota exceeded (last entry matching ${JSON.stringify(args.filter)})`);
        // The server repeats part of the command: still the client's own words.
        if (msg.params?.name === 'run_command') return text(`${args.command?.split(' ')[1]}: No such file or directory`, true);
        if (msg.params?.name === 'set_mode')
          return json({ jsonrpc: '2.0', id: msg.id, error: { code: -32602, message: 'Invalid params' } });
        return text('unknown tool', true);
      }
      default:
        return json({ jsonrpc: '2.0', id: msg.id, result: {} });
    }
  });
}

describe('secrets in tool arguments never reach the capture, and what the rules read of them does', () => {
  let rec: Recorded;
  before(async () => {
    const policy = await capturing(dir, 'secrets');
    const server = await startScriptedServer();
    try {
      rec = await record(new URL('/mcp', server.url), policy, async (c) => {
        await c.client.listTools();
        const opened = await c.client.callTool({
          name: 'open_file',
          arguments: { path: '/srv/app/config.yml', password: PASSWORD, aws_key: AWS_KEY },
        });
        assert.deepEqual(opened.content, [{ type: 'text', text: 'Error: cannot open /srv/app/config.yml: permission denied' }]);
        const queried = await c.client.callTool({ name: 'query_store', arguments: { filter: 'level:error', token: PASSWORD } });
        assert.equal(queried.isError, undefined, 'the live proxy leaves the asked-for failure alone');
        const ran = await c.client.callTool({
          name: 'run_command',
          arguments: { command: 'cat /srv/data/report.csv', password: PASSWORD },
        });
        assert.deepEqual(ran.content, [{ type: 'text', text: '/srv/data/report.csv: No such file or directory' }]);
        await c.client.callTool({ name: 'set_mode', arguments: { mode: MODE } }).catch(() => undefined);
      });
    } finally {
      await server.close();
    }
  });

  test('the capture holds none of the secrets, in any form the rules used', () => {
    for (const secret of [PASSWORD, AWS_KEY, MODE]) assert.equal(rec.capture.includes(secret), false, `the capture holds ${secret}`);
    // Nor a JSON-escaped or partial form of them.
    for (const part of ['hunter', 'AKIAIOSFODNN', 'sekrit']) assert.equal(rec.capture.includes(part), false, `the capture holds ${part}`);
    // What stands for them: a verdict, and references to where the response repeats what the client sent.
    const lines = rec.capture
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as { request: { message: { params?: { name?: string } }; facts?: RequestFacts }; response: { message: unknown } },
      );
    const line = (tool: string) => lines.find((l) => l.request.message.params?.name === tool)!;
    const echoed = (tool: string): string[] =>
      (line(tool).request.facts?.echoes ?? []).map((e) => {
        const text = e.at.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], line(tool).response.message);
        return String(text).slice(e.start, e.end);
      });
    assert.deepEqual(Object.keys(line('open_file').request.facts ?? {}), ['echoes']);
    assert.deepEqual(echoed('open_file'), ['/srv/app/config.yml']);
    assert.deepEqual(Object.keys(line('query_store').request.facts ?? {}), ['aboutArguments']);
    // Only the leak-shaped part the response repeats of the command: nothing else of it.
    assert.deepEqual(echoed('run_command'), ['/srv/data/report.csv']);
    assert.deepEqual(Object.keys(line('set_mode').request.facts ?? {}), ['argumentErrors']);
  });

  test('the replay makes the findings and decisions the live proxy made, and no others', () => {
    const live = liveJudgements(rec.records, new Set(rec.report.coverage.judged.rules));
    assert.ok(
      live.findings.some((f) => f.includes('input-validation-as-protocol-error')),
      JSON.stringify(live),
    );
    assert.deepEqual(replayedJudgements(rec.report), live);
    assert.deepEqual(
      rec.report.exchanges
        .filter((x) => x.tool === 'open_file' || x.tool === 'query_store' || x.tool === 'run_command')
        .flatMap((x) => x.findings),
      [],
      'no leaked-path for the echoed paths, no silent-success for the asked-for failure',
    );
  });
});
