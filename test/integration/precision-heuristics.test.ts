// Issue 11, "Wrong changes seen": the text heuristics (silent-success, the leak rules) under the
// shipped enforce.yaml, through the real proxy. A successful tool result is the tool's subject
// matter: a test runner's tally, log lines, a code runner's program output, a ping's address, a
// file tool's paths reach the client byte for byte with no error or warning finding. Real failures
// are still flagged and rewritten, and a result judged a failure is judged by the leak rules too
// (the SSE miss). Per-tool scoping of a rule is shown through the proxy.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadPolicyFile, loadPolicyText } from '../../src/config/load.ts';
import type { Policy } from '../../src/config/types.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { assertFires, MODERN, runScenario, type ScenarioResult } from '../helpers/rule-scenario.ts';

const LEGACY = '2025-06-18';
const VERSIONS = [LEGACY, MODERN];

const tool = (name: string) => ({ name, description: name, inputSchema: { type: 'object' } });
const TOOLS = ['run_tests', 'search_logs', 'run_code', 'ping', 'list_files', 'read_file', 'fetch_report', 'echo'].map(tool);
const call = (name: string, args: Record<string, unknown> = {}) => ({ method: 'tools/call', params: { name, arguments: args } });

/** A result body as the server writes it (text, so the test can compare bytes). */
function resultBody(id: unknown, version: string, result: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', id, result: version === MODERN ? { resultType: 'complete', ...result } : result });
}
const texts = (...t: string[]) => ({ content: t.map((text) => ({ type: 'text', text })) });

let enforce: Policy;
before(async () => {
  const loaded = await loadPolicyFile(new URL('../../config/enforce.yaml', import.meta.url).pathname, { rewritable: REWRITABLE });
  assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.errors));
  enforce = loaded.policy;
});

function assertNoWarning(r: ScenarioResult): void {
  const loud = r.violations.filter((v) => v.severity === 'error' || v.severity === 'warning');
  assert.deepEqual(
    loud.map((v) => `${String(v.rule)}: ${String(v.message)}`),
    [],
    'no error or warning finding',
  );
}

/** [name, tool, arguments, result] legitimate answers that enforce.yaml used to change. */
const LEGIT: Array<[string, string, Record<string, unknown>, Record<string, unknown>]> = [
  ["a test runner's tally", 'run_tests', {}, texts('Failed: 0, Passed: 42, Skipped: 3')],
  [
    "a test runner's report of failing tests",
    'run_tests',
    {},
    texts('3 tests failed, 39 passed\nFAIL src/db.test.ts\n  ✕ connects (12 ms)'),
  ],
  [
    'a log search returning log lines',
    'search_logs',
    { query: 'ECONNREFUSED' },
    texts(
      '2025-01-12T10:00:02.114Z ERROR Error: connect ECONNREFUSED 10.0.3.17:5432\n2025-01-12T10:00:07.502Z ERROR Error: connect ECONNREFUSED 10.0.3.17:5432\n2 matches',
    ),
  ],
  [
    'a log search returning one bare log line',
    'search_logs',
    { query: 'ECONNREFUSED' },
    texts('ERROR Error: connect ECONNREFUSED 10.0.3.17:5432'),
  ],
  [
    'a log search returning bracketed levels',
    'search_logs',
    { query: 'failed' },
    texts('[ERROR] Failed to connect to database at 10.0.3.17:5432\n[WARN] retrying in 5s'),
  ],
  [
    "a code runner's program output (text)",
    'run_code',
    { code: '1/0' },
    texts(
      'exit code: 1\nstdout:\n\nstderr:\nTraceback (most recent call last):\n  File "/tmp/run-8f2/main.py", line 1, in <module>\n    1/0\nZeroDivisionError: division by zero',
    ),
  ],
  [
    "a code runner's program output (stderr first)",
    'run_code',
    { code: 'import x' },
    {
      ...texts(
        'stderr:\nTraceback (most recent call last):\n  File "/srv/sandbox/main.py", line 1, in <module>\nModuleNotFoundError: No module named \'x\'',
      ),
      structuredContent: {
        exitCode: 1,
        stdout: '',
        stderr:
          'Traceback (most recent call last):\n  File "/srv/sandbox/main.py", line 1, in <module>\nModuleNotFoundError: No module named \'x\'',
      },
    },
  ],
  [
    "a code runner's output as JSON text",
    'run_code',
    { code: '1/0' },
    texts(
      '{"stdout":"","stderr":"Traceback (most recent call last):\\n  File \\"main.py\\", line 1\\nZeroDivisionError: division by zero","exitCode":1}',
    ),
  ],
  [
    "a ping tool's address",
    'ping',
    { host: 'db' },
    texts(
      'PING db (10.0.3.17): 56 data bytes\n64 bytes from 10.0.3.17: icmp_seq=0 ttl=64 time=0.045 ms\n1 packets transmitted, 1 packets received, 0.0% packet loss',
    ),
  ],
  [
    "a ping tool's timeout report",
    'ping',
    { host: 'db' },
    texts(
      'Request timeout for icmp_seq 0\n--- 10.0.3.17 ping statistics ---\n1 packets transmitted, 0 packets received, 100.0% packet loss',
    ),
  ],
  [
    "a ping tool's loss report",
    'ping',
    { host: '10.0.3.17' },
    texts(
      'PING 10.0.3.17 (10.0.3.17): 56 data bytes\n--- 10.0.3.17 ping statistics ---\n3 packets transmitted, 0 packets received, 100.0% packet loss\nFailed: 3 of 3',
    ),
  ],
  [
    "a file tool's listing with a missing file",
    'list_files',
    { paths: ['a.ts', 'b.ts'] },
    texts('Found 1 of 2 files under /home/alice/project\n/home/alice/project/a.ts\nnot found: /home/alice/project/b.ts'),
  ],
  [
    "a file tool's absolute paths",
    'list_files',
    { pattern: '*.ts' },
    texts('/home/alice/project/src/index.ts\n/home/alice/project/src/db.ts\n/var/lib/app/cache.json'),
  ],
  [
    "a file tool's file that is about errors",
    'read_file',
    { path: 'docs/errors.md' },
    texts('Error: could not open file — this message means the path does not exist.\nENOENT means no such file or directory.'),
  ],
  [
    'an explanation of an error',
    'echo',
    { text: 'ENOENT?' },
    texts('ENOENT means the file or directory does not exist; check the path /home/deploy/app.'),
  ],
  [
    'a search result quoting failure text',
    'search_logs',
    { query: 'Failed to' },
    texts("src/db.ts:42:    throw new Error('Failed to connect to database');\nsrc/api.ts:7:  // Failed to fetch is retried"),
  ],
];

describe('legitimate results reach the client byte for byte under enforce.yaml', () => {
  for (const [name, toolName, args, result] of LEGIT) {
    for (const version of VERSIONS) {
      test(`${name} (${version})`, async () => {
        let sent = '';
        const r = await runScenario({
          version,
          tools: TOOLS,
          request: call(toolName, args),
          respond: (req) => ({ body: (sent = resultBody(req?.id, version, result)), headers: { 'content-type': 'application/json' } }),
          proxy: { policy: () => enforce },
        });
        assertNoWarning(r);
        assert.equal(r.status, 200);
        assert.equal(r.body, sent, 'the answer is delivered as the server sent it');
      });
    }
  }
});

/** [name, tool, result text, a part the rewrite must take away (or undefined)] real failures. */
const FAILURES: Array<[string, string, string, string | undefined]> = [
  ['an error statement', 'read_file', 'Error: could not open file report.csv', undefined],
  ['a failed connection', 'fetch_report', 'Failed to connect to database', undefined],
  ['an exception', 'read_file', 'Exception: storage backend unavailable', undefined],
  [
    'a failed operation with a path',
    'fetch_report',
    "Report failed: ENOENT: no such file or directory, open '/home/deploy/reports/q4.csv'",
    '/home/deploy/reports/q4.csv',
  ],
  ['a Node system error with an address', 'ping', 'connect ECONNREFUSED 10.0.3.17:5432', '10.0.3.17'],
  ['a localized error (French)', 'read_file', "Erreur : impossible d'ouvrir le fichier", undefined],
  ['a localized error (German)', 'read_file', 'Fehler: Datei konnte nicht geöffnet werden', undefined],
];

describe('real failures are still flagged and rewritten under enforce.yaml', () => {
  for (const [name, toolName, text, leaked] of FAILURES) {
    for (const version of VERSIONS) {
      test(`${name} (${version})`, async () => {
        const r = await runScenario({
          version,
          tools: TOOLS,
          request: call(toolName),
          respond: (req) => ({ body: resultBody(req?.id, version, texts(text)), headers: { 'content-type': 'application/json' } }),
          proxy: { policy: () => enforce },
        });
        assertFires(r, 'silent-success');
        const answer = JSON.parse(r.body) as { result: { isError?: boolean; content: Array<{ text: string }> } };
        assert.equal(answer.result.isError, true);
        if (leaked) {
          assert.ok(!r.body.includes(leaked), `the leak reached the client: ${r.body}`);
          assert.ok(r.body.includes('[redacted]'), r.body);
        } else assert.equal(answer.result.content[0]!.text, text, 'the text is kept');
      });
    }
  }

  test('a silent failure inside an SSE stream gets isError and loses its path', async () => {
    const text = "Report failed: ENOENT: no such file or directory, open '/home/deploy/reports/q4.csv'";
    const progress = (id: unknown) =>
      `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: String(id), progress: 1 } })}\n\n`;
    const r = await runScenario({
      version: LEGACY,
      tools: TOOLS,
      request: call('fetch_report', { quarter: 'q4' }),
      respond: (req) => ({ sse: [progress(req?.id), `event: message\ndata: ${resultBody(req?.id, LEGACY, texts(text))}\n\n`] }),
      proxy: { policy: () => enforce },
    });
    assertFires(r, 'silent-success');
    assertFires(r, 'leaked-path');
    assert.ok(r.body.includes('"isError":true'), r.body);
    assert.ok(!r.body.includes('/home/deploy'), `the path reached the client: ${r.body}`);
    assert.ok(r.body.includes("open '[redacted]'"), r.body);
  });

  test("an isError result's structuredContent and embedded resource are redacted too", async () => {
    const result = {
      content: [
        { type: 'text', text: 'Export failed' },
        { type: 'resource', resource: { uri: 'mem://log', mimeType: 'text/plain', text: 'cannot write /var/lib/export/out.csv' } },
      ],
      structuredContent: { error: { host: 'db-primary.internal', at: '10.0.3.17:5432' } },
      isError: true,
    };
    const r = await runScenario({
      version: LEGACY,
      tools: TOOLS,
      request: call('fetch_report'),
      respond: (req) => ({ body: resultBody(req?.id, LEGACY, result), headers: { 'content-type': 'application/json' } }),
      proxy: { policy: () => enforce },
    });
    assertFires(r, 'leaked-path');
    assertFires(r, 'leaked-private-address');
    assertFires(r, 'leaked-internal-host');
    for (const part of ['/var/lib/export', 'db-primary.internal', '10.0.3.17'])
      assert.ok(!r.body.includes(part), `${part} reached the client: ${r.body}`);
  });
});

describe('a rule scoped per tool', () => {
  const load = (yaml: string): Policy => {
    const loaded = loadPolicyText(yaml, 'scoped.yaml', { rewritable: REWRITABLE });
    assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.errors));
    return loaded.policy;
  };
  const failing = 'Error: could not open file report.csv';

  // A tool-scoped entry: silent-success off for two tools; every other tool falls back to
  // defaults (rewrite here, as a user who wants it on everywhere else would write it).
  const offForTwo = load(`mode: enforce
defaults: { action: rewrite }
rules:
  silent-success: { action: off, tools: ['run_tests', 'search_logs'] }
`);
  for (const [toolName, on] of [
    ['run_tests', false],
    ['search_logs', false],
    ['read_file', true],
  ] as const) {
    test(`silent-success off for run_tests and search_logs: ${toolName} ${on ? 'rewritten' : 'untouched'}`, async () => {
      let sent = '';
      const r = await runScenario({
        version: LEGACY,
        tools: TOOLS,
        request: call(toolName),
        respond: (req) => ({ body: (sent = resultBody(req?.id, LEGACY, texts(failing))), headers: { 'content-type': 'application/json' } }),
        proxy: { policy: () => offForTwo },
      });
      if (on) {
        assertFires(r, 'silent-success');
        assert.ok(r.body.includes('"isError":true'), r.body);
      } else {
        assert.equal(r.violations.filter((v) => v.rule === 'silent-success').length, 0);
        assert.equal(r.body, sent);
      }
    });
  }

  // "On for all but these tools" with a group: the group entry applies to every tool, the rule's
  // own tool-scoped entry wins where it matches.
  const leaksButOne = load(`mode: enforce
rules:
  leaks: rewrite
  leaked-path: { action: off, tools: ['read_file'] }
`);
  for (const [toolName, on] of [
    ['read_file', false],
    ['fetch_report', true],
  ] as const) {
    test(`leaks rewrite, leaked-path off for read_file: ${toolName} ${on ? 'redacted' : 'untouched'}`, async () => {
      let sent = '';
      const r = await runScenario({
        version: LEGACY,
        tools: TOOLS,
        request: call(toolName),
        respond: (req) => ({
          body: (sent = resultBody(req?.id, LEGACY, { ...texts('cannot open /var/lib/app/data.db'), isError: true })),
          headers: { 'content-type': 'application/json' },
        }),
        proxy: { policy: () => leaksButOne },
      });
      if (on) {
        assertFires(r, 'leaked-path');
        assert.ok(!r.body.includes('/var/lib/app') && r.body.includes('[redacted]'), r.body);
      } else {
        assert.equal(r.violations.filter((v) => v.rule === 'leaked-path').length, 0);
        assert.equal(r.body, sent);
      }
    });
  }
});
