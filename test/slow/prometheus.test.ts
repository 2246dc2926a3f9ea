// Issue #44, item 5, with Debian's Prometheus (`apt-get install prometheus`; .ci/run installs it,
// elsewhere without it these tests skip and say why): the shipped alert rules pass `promtool check
// rules` and their unit tests (`promtool test rules`); a Prometheus scraping a live proxy finds
// every metric docs/operations.md documents with the type it documents, loads the alert rules and
// evaluates each of them without error, and runs every query of the Grafana dashboard.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { startPlainProcess, waitForPort, type Child } from '../bench/procs.ts';
import { startRawServer } from '../fixtures/raw-server.ts';
import { ALERTS_FILE, ALERTS_TEST_FILE, alertRules } from '../helpers/alert-rules.ts';
import { DOCUMENTED_METRICS, NEEDS_REDIS } from '../helpers/documented-metrics.ts';
import { asPromQl, dashboardQueries } from '../helpers/grafana-dashboard.ts';
import { childPort } from '../helpers/net.ts';
import { startWorkersCli } from '../helpers/workers-cli.ts';

const PROMTOOL = '/usr/bin/promtool';
const PROMETHEUS = '/usr/bin/prometheus';
const skip = existsSync(PROMTOOL) && existsSync(PROMETHEUS) ? false : 'Prometheus is not installed (apt-get install prometheus)';

const closers: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

function run(command: string, args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = execFile(command, args, { cwd, timeout: 60_000 }, (_err, stdout, stderr) =>
      resolve({ code: child.exitCode, output: stdout + stderr }),
    );
  });
}

/** Polls `read` every 100 ms until `done` says its value is complete; fails with the last one after ~30 s. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  let value = await read();
  for (let i = 0; i < 300 && !done(value); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  assert.ok(done(value), `${what}: ${JSON.stringify(value).slice(0, 2000)}`);
  return value;
}

describe('the alert rules that ship', () => {
  const dir = fileURLToPath(new URL('.', ALERTS_FILE));
  test('promtool check rules: valid', { skip }, async () => {
    const checked = await run(PROMTOOL, ['check', 'rules', fileURLToPath(ALERTS_FILE)], dir);
    assert.equal(checked.code, 0, checked.output);
    assert.match(checked.output, new RegExp(`SUCCESS: ${alertRules().length} rules found`));
  });

  test('promtool test rules: every unit test of alerts.test.yaml passes', { skip }, async () => {
    const tested = await run(PROMTOOL, ['test', 'rules', fileURLToPath(ALERTS_TEST_FILE)], dir);
    assert.equal(tested.code, 0, tested.output);
    assert.match(tested.output, /SUCCESS/);
  });
});

describe('Prometheus scraping a live proxy', () => {
  let api: URL;
  before(async () => {
    if (skip) return;
    const upstream = await startRawServer((_req, res, body) => {
      const { id } = JSON.parse(body.toString()) as { id: number };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result: { tools: [] } }));
    });
    closers.push(() => upstream.close());
    const cli = await startWorkersCli(new URL('/mcp', upstream.url), 1, ['--admin', '127.0.0.1:0'], closers);
    const [listening] = await cli.waitFor((r) => r.msg === 'admin listening');
    const admin = new URL(String(listening!.admin));
    // Some traffic, so that counters with labels have series too.
    const res = await request(cli.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    await res.body.text();

    const work = mkdtempSync(join(tmpdir(), 'warden-prometheus-'));
    writeFileSync(
      join(work, 'prometheus.yml'),
      [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        `rule_files: [${JSON.stringify(fileURLToPath(ALERTS_FILE))}]`,
        `scrape_configs: [{ job_name: mcp-warden, static_configs: [{ targets: [${JSON.stringify(admin.host)}] }] }]`,
        '',
      ].join('\n'),
    );
    const port = await childPort();
    const prometheus: Child = startPlainProcess(PROMETHEUS, [
      `--config.file=${join(work, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(work, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ]);
    closers.push(async () => {
      await prometheus.stop();
      rmSync(work, { recursive: true, force: true });
    });
    await waitForPort(prometheus, port, 30_000);
    // It listens before it serves its API (503 while its storage opens).
    const ready = async () => {
      const res = await request(`http://127.0.0.1:${port}/-/ready`);
      await res.body.text();
      return res.statusCode;
    };
    await until(ready, (status) => status === 200, 'Prometheus ready');
    api = new URL(`http://127.0.0.1:${port}/api/v1/`);
  });

  const get = async (path: string): Promise<{ status: string; data: unknown; error?: string }> =>
    (await request(new URL(path, api))).body.json() as Promise<{ status: string; data: unknown; error?: string }>;

  test('every documented metric is scraped with its documented type', { skip }, async () => {
    // Metrics of the state store (--state redis://) are registered only with a store.
    const expected = [...DOCUMENTED_METRICS].filter(([name]) => !NEEDS_REDIS.has(name));
    const read = async () => {
      const { data } = await get('targets/metadata?match_target={job="mcp-warden"}');
      return new Map((data as Array<{ metric: string; type: string }>).map((m) => [m.metric, m.type]));
    };
    const scraped = await until(read, (m) => expected.every(([name]) => m.has(name)), 'metadata of every documented metric');
    assert.deepEqual(
      expected
        .filter(([name, type]) => scraped.get(name) !== type)
        .map(([name, type]) => `${name}: ${scraped.get(name)}, documented ${type}`),
      [],
    );
    const up = await get('query?query=up{job="mcp-warden"}');
    assert.equal((up.data as { result: Array<{ value: [number, string] }> }).result[0]?.value[1], '1');
  });

  test('the alert rules load and each evaluates without error against the live series', { skip }, async () => {
    const names = alertRules().map((r) => r.alert);
    type Rule = { name: string; health: string; lastError?: string; lastEvaluation: string };
    const read = async () => ((await get('rules')).data as { groups: Array<{ rules: Rule[] }> }).groups.flatMap((g) => g.rules);
    const rules = await until(
      read,
      (rs) => names.every((n) => rs.some((r) => r.name === n && !r.lastEvaluation.startsWith('0001'))),
      'every alert evaluated once',
    );
    assert.deepEqual(
      rules.filter((r) => r.health !== 'ok').map((r) => `${r.name}: ${r.health} ${r.lastError ?? ''}`),
      [],
    );
    // A healthy replica fires nothing but what its upstream's state says (the upstream is up here).
    const firing = (await get('alerts')).data as { alerts: Array<{ labels: { alertname: string } }> };
    assert.deepEqual(
      firing.alerts.map((a) => a.labels.alertname),
      [],
    );
  });

  test("every query of the Grafana dashboard runs (Grafana's variables given values)", { skip }, async () => {
    for (const { panel, expr } of dashboardQueries()) {
      const answer = await get(`query?query=${encodeURIComponent(asPromQl(expr))}`);
      assert.equal(answer.status, 'success', `${panel}: ${answer.error}`);
    }
  });
});
