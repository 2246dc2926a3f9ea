// replayCapture on hand-written capture lines: the proxy's state rebuilt from the capture
// (sessions, versions, tool catalogues) and each exchange judged and decided as the proxy would.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadPolicyFile } from '../../src/config/load.ts';
import { defaultPolicy } from '../../src/config/compile.ts';
import type { Policy } from '../../src/config/types.ts';
import { parseCaptureLine, replayCapture, replayCaptureSync, type ReplayedExchange } from '../../src/replay/replay.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { RULES } from '../../src/rules/index.ts';
import type { RequestFacts } from '../../src/rules/types.ts';
import type { CaptureRecord } from '../../src/sinks/capture.ts';

const SESSION = '5f1c0c5e-6a57-4d0e-9d43-3c1f0e2f7a10';
const VERSION = '2025-11-25';

async function policyOf(path: string): Promise<Policy> {
  const loaded = await loadPolicyFile(path, { rewritable: REWRITABLE });
  if (!loaded.ok) throw new Error(`${path} does not load`);
  return loaded.policy;
}

interface RecordSpec {
  session?: string | null;
  protocolVersion?: string | null;
  from?: 'client' | 'server';
  headers?: Record<string, string>;
  request: Record<string, unknown>;
  response: Record<string, unknown> | null;
  outcome?: string;
  status?: number | null;
  transport?: CaptureRecord['response']['transport'];
  facts?: RequestFacts;
}

/** One capture line, as CaptureSink writes it. */
function line(spec: RecordSpec): string {
  const session = spec.session === undefined ? SESSION : spec.session;
  const headers = spec.headers ?? (session === null ? {} : { 'mcp-session-id': session, 'mcp-protocol-version': VERSION });
  const record: CaptureRecord = {
    v: 1,
    time: '2026-12-02T10:18:55.560Z',
    session,
    protocolVersion: spec.protocolVersion === undefined ? VERSION : spec.protocolVersion,
    request: {
      from: spec.from ?? 'client',
      headers,
      message: { jsonrpc: '2.0', ...spec.request },
      ...(spec.facts ? { facts: spec.facts } : {}),
    },
    response: {
      outcome: spec.outcome ?? 'result',
      status: spec.status === undefined ? 200 : spec.status,
      contentType: null,
      transport: spec.transport ?? 'json',
      message: spec.response === null ? null : { jsonrpc: '2.0', ...spec.response },
      bodyProblem: null,
      unmatched: [],
      proxyError: null,
    },
  };
  return JSON.stringify(record);
}

const initialize = (session: string | null = SESSION): string =>
  line({
    session,
    headers: {},
    request: {
      id: 0,
      method: 'initialize',
      params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'c', version: '1' } },
    },
    response: { id: 0, result: { protocolVersion: VERSION, capabilities: { tools: {} }, serverInfo: { name: 's', version: '1' } } },
  });

const toolsList = (names: string[], session: string | null = SESSION): string =>
  line({
    session,
    request: { id: 1, method: 'tools/list', params: {} },
    response: { id: 1, result: { tools: names.map((name) => ({ name, inputSchema: { type: 'object', properties: {} } })) } },
  });

const call = (id: number, name: string, result: Record<string, unknown>, session: string | null = SESSION): string =>
  line({
    session,
    request: { id, method: 'tools/call', params: { name, arguments: { password: '[REDACTED]' } } },
    response: { id, result },
    outcome: result.isError === true ? 'isError' : 'result',
  });

const notFound = (name: string) => ({ content: [{ type: 'text', text: `MCP error -32602: Tool ${name} not found` }], isError: true });

/** The usual capture: initialize, tools/list (echo), then a call of a tool that is not listed, answered with isError. */
const SESSION_LINES = [initialize(), toolsList(['echo']), call(2, 'no_such_tool', notFound('no_such_tool'))];

const rulesOf = (x: ReplayedExchange | undefined): string[] => (x?.findings ?? []).map((f) => f.rule);

describe('replayCapture: an unknown tool answered with isError', () => {
  test('under config/enforce.yaml it would be rewritten to JSON-RPC error -32602', async () => {
    const report = await replayCapture(SESSION_LINES, await policyOf('config/enforce.yaml'));
    assert.equal(report.policy.mode, 'enforce');
    assert.equal(report.policy.judgedAs, 'enforce');
    assert.deepEqual(report.lines, { total: 3, blank: 0, exchanges: 3, bad: 0, logRecords: 0 });
    assert.deepEqual(
      report.exchanges.map((x) => [x.method, x.id, x.tool, x.session, x.protocolVersion]),
      [
        ['initialize', 0, undefined, SESSION, VERSION],
        ['tools/list', 1, undefined, SESSION, VERSION],
        ['tools/call', 2, 'no_such_tool', SESSION, VERSION],
      ],
    );
    const [init, list, bad] = report.exchanges;
    assert.deepEqual([init?.decision, list?.decision], [{ kind: 'pass' }, { kind: 'pass' }]);
    assert.deepEqual([rulesOf(init), rulesOf(list)], [[], []]);

    assert.deepEqual(
      bad?.findings.map((f) => [f.rule, f.severity, f.action]),
      [['unknown-tool-as-iserror', 'error', 'rewrite']],
    );
    assert.match(bad!.findings[0]!.message, /which is not in the server's tools\/list/);
    const d = bad!.decision;
    assert.equal(d.kind, 'rewrite');
    if (d.kind !== 'rewrite') return;
    assert.deepEqual(d.rules, ['unknown-tool-as-iserror']);
    assert.equal(d.message.id, 2);
    assert.deepEqual([d.message.error?.code, d.message.error?.message], [-32602, 'Unknown tool: no_such_tool']);
    assert.match(d.after, /"code":-32602/);
    assert.match(d.before, /isError/);

    assert.deepEqual(report.summary, {
      exchanges: 3,
      flagged: 1,
      findings: 1,
      byRule: [{ rule: 'unknown-tool-as-iserror', severity: 'error', count: 1, actions: { rewrite: 1 } }],
      byAction: { rewrite: 1 },
      decisions: { pass: 2, rewrite: 1, block: 0 },
    });
  });

  test('under config/audit.yaml it is flagged with action log, and nothing would change', async () => {
    const report = await replayCapture(SESSION_LINES, await policyOf('config/audit.yaml'));
    assert.equal(report.policy.mode, 'audit');
    assert.equal(report.policy.judgedAs, 'enforce');
    const bad = report.exchanges[2];
    assert.deepEqual(
      bad?.findings.map((f) => [f.rule, f.severity, f.action]),
      [['unknown-tool-as-iserror', 'error', 'log']],
    );
    assert.deepEqual(bad?.decision, { kind: 'pass' });
    assert.deepEqual(report.summary.decisions, { pass: 3, rewrite: 0, block: 0 });
    assert.deepEqual(report.summary.byAction, { log: 1 });
  });

  test('a policy that blocks the rule: the answer would be withheld with WARDEN_BLOCKED', async () => {
    const { loadPolicyText } = await import('../../src/config/load.ts');
    const loaded = loadPolicyText('mode: audit\nrules:\n  unknown-tool: block\n', 'block.yaml');
    assert.ok(loaded.ok);
    const report = replayCaptureSync(SESSION_LINES, loaded.policy);
    const d = report.exchanges[2]?.decision;
    assert.equal(d?.kind, 'block');
    if (d?.kind !== 'block') return;
    assert.deepEqual([d.rules, d.status, d.message.id, d.message.error?.code], [['unknown-tool-as-iserror'], 200, 2, -32603]);
    assert.deepEqual((d.message.error!.data as { reason: string }).reason, 'WARDEN_BLOCKED');
  });
});

describe('replayCapture: bad lines are counted, never fatal', () => {
  test('not JSON, another capture version, not a record, a response to another id; blank lines skipped', async () => {
    const wrongId = line({ request: { id: 7, method: 'ping' }, response: { id: 8, result: {} } });
    const lines = [
      initialize(),
      'this is not json',
      '',
      JSON.stringify({ ...JSON.parse(toolsList(['echo'])), v: 2 }),
      '[1,2,3]',
      JSON.stringify({ v: 1, time: 'now' }),
      wrongId,
      '{"v":1,"time":"2026-12-02T10:18:55.560Z","session":null,"protocolVe', // a line cut short (the proxy was killed mid-write)
      call(3, 'no_such_tool', notFound('no_such_tool')),
    ];
    const report = await replayCapture(lines, await policyOf('config/enforce.yaml'));
    assert.deepEqual(report.lines, { total: 9, blank: 1, exchanges: 2, bad: 6, logRecords: 0 });
    assert.deepEqual(
      report.badLines.map((b) => b.line),
      [2, 4, 5, 6, 7, 8],
    );
    assert.match(report.badLines[0]!.reason, /^not JSON/);
    assert.equal(report.badLines[1]!.reason, 'capture version 2; this mcp-warden reads version 1');
    assert.equal(report.badLines[2]!.reason, 'not a capture record (not a JSON object)');
    assert.equal(report.badLines[3]!.reason, 'not a capture record (session is not a string or null)');
    assert.equal(report.badLines[4]!.reason, 'response.message does not answer request id 7');
    assert.match(report.badLines[5]!.reason, /^not JSON/);
    // The good lines around them were replayed; with no tools/list replayed, the server's own words say the tool is unknown.
    assert.deepEqual(
      report.exchanges.map((x) => [x.line, x.method]),
      [
        [1, 'initialize'],
        [9, 'tools/call'],
      ],
    );
    assert.match(report.exchanges[1]!.findings[0]!.message, /which the server itself calls unknown/);
    assert.equal(report.exchanges[1]!.decision.kind, 'rewrite');
  });

  test('parseCaptureLine says why a line is not a record', () => {
    assert.deepEqual(parseCaptureLine('{"v":"1"}'), { ok: false, reason: 'capture version "1"; this mcp-warden reads version 1' });
    assert.deepEqual(parseCaptureLine('{}'), { ok: false, reason: 'capture version missing; this mcp-warden reads version 1' });
    assert.equal(parseCaptureLine(initialize()).ok, true);
  });

  test('maxBadLines bounds the list, not the count', () => {
    const report = replayCaptureSync(['x', 'y', 'z'], defaultPolicy(), { maxBadLines: 1 });
    assert.equal(report.lines.bad, 3);
    assert.equal(report.badLines.length, 1);
  });
});

describe("replayCapture: the session state is the proxy's", () => {
  test('a tool listed by tools/list is not flagged unknown, even when its error says "not found"', () => {
    // `lookup` is in the catalogue: its isError "Tool lookup not found" is the tool's own failure.
    const withList = replayCaptureSync(
      [initialize(), toolsList(['echo', 'lookup']), call(2, 'lookup', notFound('lookup'))],
      defaultPolicy(),
    );
    assert.deepEqual(rulesOf(withList.exchanges[2]), []);
    // Without the tools/list line the catalogue is unknown, and the server's words decide.
    const without = replayCaptureSync([initialize(), call(2, 'lookup', notFound('lookup'))], defaultPolicy());
    assert.deepEqual(rulesOf(without.exchanges[1]), ['unknown-tool-as-iserror']);
  });

  test('a complete catalogue makes a plain result for a missing tool an unknown-tool-as-result', () => {
    const plain = { content: [{ type: 'text', text: 'done' }] };
    const listed = replayCaptureSync([initialize(), toolsList(['echo']), call(2, 'ghost', plain), call(3, 'echo', plain)], defaultPolicy());
    assert.deepEqual(listed.exchanges.map(rulesOf), [[], [], ['unknown-tool-as-result'], []]);
    const unlisted = replayCaptureSync([initialize(), call(2, 'ghost', plain)], defaultPolicy());
    assert.deepEqual(unlisted.exchanges.map(rulesOf), [[], []]);
  });

  test('catalogues are per session; a null session is one anonymous session', async () => {
    const other = '0b7f9e2a-1111-4c4c-8888-aaaaaaaaaaaa';
    const plain = { content: [{ type: 'text', text: 'done' }] };
    const report = await replayCapture(
      [
        initialize(),
        toolsList(['echo']),
        initialize(other),
        call(5, 'ghost', plain, other),
        toolsList(['tool_a'], null),
        call(6, 'ghost', plain, null),
        call(7, 'tool_a', plain, null),
      ],
      defaultPolicy(),
    );
    assert.equal(report.sessions, 3);
    // `other` listed nothing, so its `ghost` is not known to be missing; the anonymous session listed tool_a only.
    assert.deepEqual(report.exchanges.map(rulesOf), [[], [], [], [], [], ['unknown-tool-as-result'], []]);
    assert.deepEqual(
      report.exchanges.map((x) => x.session),
      [SESSION, SESSION, other, other, null, null, null],
    );
  });

  test('the version is learned from the captured initialize, not read from the record', () => {
    // The records say nothing about the version; the initialize negotiated 2025-06-18.
    const init = line({
      headers: {},
      protocolVersion: null,
      request: { id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } },
      response: { id: 0, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 's', version: '1' } } },
    });
    const ping = line({
      headers: { 'mcp-session-id': SESSION },
      protocolVersion: null,
      request: { id: 1, method: 'ping' },
      response: { id: 1, result: {} },
    });
    const report = replayCaptureSync([init, ping], defaultPolicy());
    assert.deepEqual(
      report.exchanges.map((x) => [x.protocolVersion, x.capturedProtocolVersion]),
      [
        ['2025-06-18', null],
        ['2025-06-18', null],
      ],
    );
  });

  test('a capture that starts mid-session is judged by the version the proxy recorded', () => {
    const report = replayCaptureSync([call(4, 'no_such_tool', notFound('no_such_tool'))], defaultPolicy());
    const x = report.exchanges[0]!;
    assert.equal(x.protocolVersion, VERSION);
    assert.equal('capturedProtocolVersion' in x, false);
    assert.deepEqual(rulesOf(x), ['unknown-tool-as-iserror']);
  });

  test('an async iterable of lines gives the same report as an array', async () => {
    async function* lines(): AsyncGenerator<string> {
      for (const l of SESSION_LINES) yield l;
    }
    const policy = await policyOf('config/enforce.yaml');
    assert.deepEqual(await replayCapture(lines(), policy), replayCaptureSync(SESSION_LINES, policy));
  });
});

describe('replayCapture: unanswered exchanges and what a replay cannot judge', () => {
  test('an HTML answer (no response message) is judged with its body problem and rewritten under enforce', async () => {
    const record = JSON.parse(
      line({
        request: { id: 9, method: 'tools/call', params: { name: 'echo', arguments: {} } },
        response: null,
        outcome: 'invalid-response',
        status: 500,
      }),
    ) as CaptureRecord;
    record.response.bodyProblem = { problem: 'html', excerpt: '<html><body>Internal Server Error</body></html>' };
    const report = replayCaptureSync([initialize(), toolsList(['echo']), JSON.stringify(record)], await policyOf('config/enforce.yaml'));
    const x = report.exchanges[2]!;
    assert.equal(x.outcome, 'invalid-response');
    assert.deepEqual(rulesOf(x), ['html-body']);
    assert.equal(x.decision.kind, 'rewrite');
    if (x.decision.kind === 'rewrite')
      assert.deepEqual([x.decision.message.id, x.decision.message.error?.code, x.decision.status], [9, -32603, 200]);
  });

  test('the coverage names the judged rules and the families that are not', () => {
    const { coverage } = replayCaptureSync([], defaultPolicy());
    const judged = RULES.filter((r) => r.subject === 'exchange' && r.party === 'server').map((r) => r.id);
    assert.deepEqual(coverage.judged.rules, judged);
    assert.ok(judged.includes('unknown-tool-as-iserror'));
    const [post, client] = coverage.notJudged;
    assert.equal(post?.what, 'POST-level rules');
    assert.deepEqual(
      post?.rules,
      RULES.filter((r) => r.subject === 'post').map((r) => r.id),
    );
    assert.deepEqual(client?.rules, ['missing-request-meta', 'header-mismatch', 'request-id-in-flight']);
    const lines = coverage.notJudged[2];
    assert.deepEqual(lines?.rules, ['stdio-not-a-message', 'stdio-embedded-newline']);
    assert.equal(coverage.judged.rules.length + (post?.rules.length ?? 0) + (client?.rules.length ?? 0) + lines.rules.length, RULES.length);
  });
});

describe("replayCapture: a capture's request facts stand for the arguments it redacted", () => {
  /** A session whose one call asked for an error message and got one (no isError), or failed with an echoed path. */
  const session = (what: 'asked' | 'echoed', facts: RequestFacts | undefined): string[] => {
    const text = what === 'asked' ? 'Error: Operation failed' : 'Error: cannot open /srv/app/config.yml: permission denied';
    return [
      initialize(),
      toolsList(['get_message']),
      line({
        request: { id: 2, method: 'tools/call', params: { name: 'get_message', arguments: { messageType: '[REDACTED]' } } },
        response: { id: 2, result: { content: [{ type: 'text', text }], ...(what === 'echoed' ? { isError: true } : {}) } },
        outcome: what === 'echoed' ? 'isError' : 'result',
        ...(facts ? { facts } : {}),
      }),
    ];
  };
  const judged = async (lines: string[]) => {
    const report = replayCaptureSync(lines, await policyOf('config/enforce.yaml'));
    assert.equal(report.lines.bad, 0, JSON.stringify(report.badLines));
    const x = report.exchanges[2];
    return { rules: rulesOf(x), decision: x?.decision.kind };
  };

  test('a call the live proxy found asking for its error is not a silent success; with no fact it is', async () => {
    assert.deepEqual(await judged(session('asked', { aboutArguments: true })), { rules: [], decision: 'pass' });
    assert.deepEqual(await judged(session('asked', {})), { rules: ['silent-success'], decision: 'rewrite' });
  });

  test('a path the response repeats from the request is no leak', async () => {
    const echo = { at: ['result', 'content', 0, 'text'], start: 19, end: 38 };
    assert.deepEqual(await judged(session('echoed', { echoes: [echo] })), { rules: [], decision: 'pass' });
    assert.deepEqual(await judged(session('echoed', {})), { rules: ['leaked-path'], decision: 'rewrite' });
  });

  test('a capture from before the facts is replayed on its redacted arguments, as it was', async () => {
    // What it loses: the exemptions that read the arguments' text (asked-for failures, echoed paths).
    assert.deepEqual(await judged(session('asked', undefined)), { rules: ['silent-success'], decision: 'rewrite' });
    assert.deepEqual(await judged(session('echoed', undefined)), { rules: ['leaked-path'], decision: 'rewrite' });
  });

  test('facts of the wrong shape make a bad line', () => {
    const bad = JSON.parse(session('asked', {})[2]!) as CaptureRecord;
    bad.request.facts = { aboutArguments: 'yes' } as unknown as RequestFacts;
    const parsed = parseCaptureLine(JSON.stringify(bad));
    assert.deepEqual(parsed, { ok: false, reason: 'not a capture record (request.facts is not a set of request facts)' });
  });
});
