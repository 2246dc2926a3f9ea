// Policy compilation: how setting() resolves a finding (rule entry, then group entry, then the
// default; scopes by method and tool globs; severity overrides), the load-time warnings, the
// built-in defaults, the shipped policies, and the committed JSON Schema.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { compilePolicy, defaultPolicy, globsToRegExp, type PolicyDocument } from '../../src/config/compile.ts';
import { loadPolicyFile, loadPolicyText } from '../../src/config/load.ts';
import { buildPolicySchema, policySchemaJson, ruleGroups } from '../../src/config/schema.ts';
import type { FindingScope, Policy } from '../../src/config/types.ts';
import { runtimeFactory } from '../../src/config/runtime.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { RULES } from '../../src/rules/index.ts';
import { policyValidatorSource } from '../helpers/policy-validator.ts';
import { subject } from '../helpers/subject.ts';
import type { RuleInfo } from '../../src/rules/types.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const rule = (id: string, group: string, severity: RuleInfo['severity'] = 'error', party: RuleInfo['party'] = 'server'): RuleInfo => ({
  id,
  group,
  severity,
  party,
  versions: ['2025-11-25'],
  summary: `the ${id} rule`,
  source: 'test',
});

const TEST_RULES: readonly RuleInfo[] = [
  rule('unknown-tool-as-iserror', 'unknown-tool'),
  rule('unknown-tool-as-result', 'unknown-tool'),
  rule('silent-success', 'silent-success', 'warning'),
  rule('legacy-range-code', 'codes', 'warning'),
  rule('error-data-required', 'codes'),
  rule('html-body', 'bodies'),
  rule('accept-header', 'client', 'error', 'client'),
  rule('leaked-path', 'leaks', 'warning'),
];

/** A finding's scope for a rule of TEST_RULES (or the real catalogue). */
function scope(id: string, method?: string, tool?: string): FindingScope {
  const r = [...TEST_RULES, ...RULES].find((x) => x.id === id)!;
  return { rule: r.id, group: r.group, severity: r.severity, method, tool };
}

function load(text: string, options: { rewritable?: ReadonlySet<string> } = {}): Policy {
  const result = loadPolicyText(text, 'p.yaml', { rules: TEST_RULES, ...options });
  assert.ok(result.ok, result.ok ? '' : JSON.stringify(result.errors));
  return result.policy;
}

describe('setting(): resolution order', () => {
  const policy = load(
    [
      'mode: enforce',
      'defaults: { action: off }',
      'rules:',
      '  unknown-tool: rewrite',
      '  unknown-tool-as-result: block',
      '  codes: { action: rewrite, severity: info }',
      '  legacy-range-code: log',
      "  silent-success: { action: rewrite, severity: error, tools: ['send_*', 'notify_?'] }",
      "  html-body: { action: block, methods: ['tools/call'] }",
      "  bodies: { action: rewrite, methods: ['tools/*', 'resources/read'] }",
    ].join('\n'),
  );

  test("the rule's own entry wins over its group's", () => {
    assert.deepEqual(policy.setting(scope('unknown-tool-as-result')), { action: 'block', severity: 'error' });
    assert.deepEqual(policy.setting(scope('legacy-range-code')), { action: 'log', severity: 'info' });
  });

  test("without an entry of its own, the group's entry applies", () => {
    assert.deepEqual(policy.setting(scope('unknown-tool-as-iserror')), { action: 'rewrite', severity: 'error' });
    assert.deepEqual(policy.setting(scope('error-data-required')), { action: 'rewrite', severity: 'info' });
  });

  test("without a matching entry, defaults.action applies with the rule's own severity", () => {
    assert.deepEqual(policy.setting(scope('accept-header')), { action: 'off', severity: 'error' });
    assert.deepEqual(policy.setting(scope('leaked-path', 'tools/call', 'x')), { action: 'off', severity: 'warning' });
  });

  test('a scoped rule entry applies only where its globs match; elsewhere the group, then the default', () => {
    assert.deepEqual(policy.setting(scope('silent-success', 'tools/call', 'send_email')), { action: 'rewrite', severity: 'error' });
    assert.deepEqual(policy.setting(scope('silent-success', 'tools/call', 'notify_a')), { action: 'rewrite', severity: 'error' });
    assert.deepEqual(policy.setting(scope('silent-success', 'tools/call', 'notify_ab')), { action: 'off', severity: 'warning' });
    assert.deepEqual(policy.setting(scope('silent-success', 'tools/call', 'resend_email')), { action: 'off', severity: 'warning' });
    assert.deepEqual(policy.setting(scope('silent-success', 'tools/call', undefined)), { action: 'off', severity: 'warning' });
    assert.deepEqual(policy.setting(scope('html-body', 'tools/call')), { action: 'block', severity: 'error' });
    assert.deepEqual(policy.setting(scope('html-body', 'resources/read')), { action: 'rewrite', severity: 'error' });
    assert.deepEqual(policy.setting(scope('html-body', 'prompts/get')), { action: 'off', severity: 'error' });
    assert.deepEqual(policy.setting(scope('html-body', undefined)), { action: 'off', severity: 'error' });
  });

  test('an entry without an action (or severity) leaves it to the next level', () => {
    const p = load(
      'defaults: { action: block }\nrules:\n  codes: { action: rewrite, severity: info }\n  legacy-range-code: { severity: error }\n  error-data-required: log\n',
    );
    assert.deepEqual(p.setting(scope('legacy-range-code')), { action: 'rewrite', severity: 'error' });
    assert.deepEqual(p.setting(scope('error-data-required')), { action: 'log', severity: 'info' });
    const q = load('rules:\n  html-body: { severity: info }\n');
    assert.deepEqual(q.setting(scope('html-body')), { action: 'log', severity: 'info' });
  });

  test('audit mode still returns the configured actions', () => {
    const p = load('mode: audit\nrules:\n  html-body: block\n  leaks: rewrite\n');
    assert.equal(p.mode, 'audit');
    assert.deepEqual(p.setting(scope('html-body')), { action: 'block', severity: 'error' });
    assert.deepEqual(p.setting(scope('leaked-path')), { action: 'rewrite', severity: 'warning' });
  });
});

describe('globs', () => {
  test('* matches any run of characters (slashes too), ? exactly one, the rest literally', () => {
    const re = globsToRegExp(['tools/*', 'send_?', 'a.b', '(x)+', 'notify_*_now']);
    for (const yes of ['tools/call', 'tools/', 'tools/a/b', 'send_1', 'a.b', '(x)+', 'notify__now', 'notify_a_b_now'])
      assert.ok(re.test(yes), yes);
    for (const no of ['tool/call', 'xtools/call', 'send_', 'send_12', 'aXb', 'xx', 'notify_now', 'Tools/call']) assert.ok(!re.test(no), no);
    assert.ok(globsToRegExp(['*']).test(''));
    assert.ok(globsToRegExp(['?']).test('é'));
  });
});

describe('compiled settings', () => {
  test('upstream, limits, log, redaction, patterns and capture', () => {
    const result = loadPolicyText(
      [
        'upstream: { url: "http://127.0.0.1:3000/mcp", timeout: 30s, idleTimeout: 0, connectTimeout: 1500 }',
        'limits: { maxRequestBody: 1mib, auditBody: 512kb, auditEvent: 2048, maxSessions: 500, sessionIdle: 2m }',
        'log: { level: debug, arguments: full }',
        'redaction: { marker: "<hidden>" }',
        "patterns: { leaks: [{ rule: leaked-path, pattern: '\\bvault-[a-z]+' }], silentSuccess: { add: ['^\\s*oops\\b'], replace: true } }",
        'capture: { path: ./cap/x.jsonl }',
      ].join('\n'),
      'p.yaml',
      { rules: TEST_RULES, baseDir: '/etc/warden' },
    );
    assert.ok(result.ok);
    const p = result.policy;
    assert.equal(p.upstream.url?.href, 'http://127.0.0.1:3000/mcp');
    assert.deepEqual(
      { ...p.upstream, url: undefined },
      { url: undefined, headersTimeoutMs: 30_000, bodyTimeoutMs: 0, connectTimeoutMs: 1500 },
    );
    assert.deepEqual(p.limits, {
      maxRequestBytes: 1024 * 1024,
      auditBodyBytes: 512_000,
      auditEventBytes: 2048,
      maxSessions: 500,
      sessionIdleMs: 120_000,
    });
    assert.deepEqual(p.log, { level: 'debug', arguments: 'full' });
    assert.equal(p.redactionMarker, '<hidden>');
    assert.deepEqual(
      p.patterns.leaks.map((l) => [l.rule, l.re.source, l.re.flags]),
      [['leaked-path', '\\bvault-[a-z]+', 'g']],
    );
    assert.deepEqual(
      p.patterns.silentSuccess.map((re) => [re.source, re.flags]),
      [['^\\s*oops\\b', 'im']],
    );
    assert.ok(p.patterns.silentSuccess[0]!.test('fine\n  OOPS, that failed'));
    assert.equal(p.patterns.replaceSilentSuccess, true);
    assert.deepEqual(p.capture, { path: '/etc/warden/cap/x.jsonl' });
    assert.ok(Object.isFrozen(p) && Object.isFrozen(p.limits) && Object.isFrozen(p.patterns.leaks) && Object.isFrozen(p.warnings));
  });

  test('empty sections are the defaults', () => {
    const p = load('upstream:\nlimits:\nlog:\npatterns:\n  leaks:\n  silentSuccess:\ncapture:\ndefaults:\nrules:\n');
    assert.deepEqual(
      [p.upstream, p.limits, p.log, p.capture, p.patterns.leaks, p.warnings],
      [{}, {}, { arguments: 'redacted' }, undefined, [], []],
    );
  });
});

describe('defaultPolicy()', () => {
  test('audit mode, every rule logged with its own severity, nothing else set', () => {
    const p = defaultPolicy();
    assert.equal(p.source, '(built-in defaults)');
    assert.equal(p.mode, 'audit');
    for (const r of RULES) assert.deepEqual(p.setting(scope(r.id, 'tools/call', 'x')), { action: 'log', severity: r.severity }, r.id);
    assert.deepEqual(
      [p.upstream, p.limits, p.log, p.redactionMarker, p.patterns, p.capture, p.warnings],
      [{}, {}, { arguments: 'redacted' }, '[redacted]', { leaks: [], silentSuccess: [], replaceSilentSuccess: false }, undefined, []],
    );
  });

  test('an empty mapping is the same policy as no file', () => {
    const p = load('{}');
    assert.equal(p.mode, 'audit');
    assert.deepEqual(p.setting(scope('html-body')), { action: 'log', severity: 'error' });
  });
});

describe('warnings', () => {
  test('rewrite where no rewriter exists, by rule, group and default; a method no MCP version has; a severity on an off rule; replace without patterns', () => {
    const p = load(
      [
        'defaults: { action: rewrite }',
        'rules:',
        '  accept-header: rewrite',
        '  codes: rewrite',
        "  html-body: { action: block, methods: ['tool/call', 'tools/*', 'x/*'] }",
        '  leaked-path: { action: off, severity: error }',
        'patterns: { silentSuccess: { replace: true } }',
      ].join('\n'),
      { rewritable: new Set(['unknown-tool-as-iserror', 'legacy-range-code', 'html-body']) },
    );
    assert.deepEqual(p.warnings, [
      'p.yaml:1:21: defaults.action: rewrite: 2 rules without a rewriter (unknown-tool-as-result, silent-success): their findings are logged, not rewritten',
      'p.yaml:3:18: rules.accept-header: rewrite: accept-header has no rewriter, so its findings are logged, not rewritten',
      'p.yaml:4:10: rules.codes: rewrite: 1 rule without a rewriter (error-data-required): their findings are logged, not rewritten',
      'p.yaml:5:41: rules.html-body.methods[0]: "tool/call" matches no method MCP defines; did you mean "tools/call"?',
      'p.yaml:5:65: rules.html-body.methods[2]: "x/*" matches no method MCP defines',
      'p.yaml:6:41: rules.leaked-path.severity: has no effect: the rule is off',
      'p.yaml:7:39: patterns.silentSuccess.replace: true with no patterns in add: silent-success will flag nothing (set the rule off instead)',
    ]);
  });

  test('no rewriter list, no rewrite warnings; block on a client rule is fine', () => {
    assert.deepEqual(load('defaults: { action: rewrite }\nrules:\n  accept-header: block\n').warnings, []);
  });

  test('compilePolicy without a locator names the source and key', () => {
    const doc: PolicyDocument = { rules: { 'accept-header': 'rewrite' } };
    assert.deepEqual(compilePolicy(doc, { source: 'env', rules: TEST_RULES, rewritable: new Set() }).warnings, [
      'env: rules.accept-header: rewrite: accept-header has no rewriter, so its findings are logged, not rewritten',
    ]);
  });
});

describe('shipped policies', () => {
  const BLOCKED = ['unreadable-request', 'unreadable-response', 'stdio-not-a-message', 'request-envelope'];
  const SAFE = [
    'unknown-tool-as-iserror',
    'unknown-tool-as-result',
    'unknown-tool-wrong-code',
    'unknown-tool-unanswered',
    'html-body',
    'empty-body',
    'non-json-body',
    'not-jsonrpc-body',
    'non-utf8-body',
    'no-response',
    'parse-error-unanswered',
    'stdio-embedded-newline',
    'leaked-stack-trace',
    'leaked-path',
    'leaked-private-address',
    'leaked-internal-host',
    'silent-success',
    'retired-code',
    'resource-not-found-code',
    'reserved-code',
    'legacy-range-code',
    'unknown-method-wrong-code',
    'error-id-null',
    'answer-id-type',
    'unknown-method-status',
    'error-status-pairing',
    'result-type-missing',
  ];

  test('config/audit.yaml: audit mode, every rule logged with its own severity, no capture, no warnings', async () => {
    const result = await loadPolicyFile(`${ROOT}config/audit.yaml`, { rewritable: REWRITABLE });
    assert.ok(result.ok, result.ok ? '' : JSON.stringify(result.errors));
    const p = result.policy;
    assert.equal(p.mode, 'audit');
    assert.deepEqual(p.warnings, []);
    assert.equal(p.capture, undefined);
    for (const r of RULES)
      assert.deepEqual(p.setting(scope(r.id, 'tools/call', 'send_email')), { action: 'log', severity: r.severity }, r.id);
  });

  test('config/enforce.yaml: enforce mode, every safe normalisation rewritten, what cannot be read whole blocked, everything else logged, no warnings', async () => {
    const result = await loadPolicyFile(`${ROOT}config/enforce.yaml`, { rewritable: REWRITABLE });
    assert.ok(result.ok, result.ok ? '' : JSON.stringify(result.errors));
    const p = result.policy;
    assert.equal(p.mode, 'enforce');
    assert.deepEqual(p.warnings, []);
    assert.equal(p.capture, undefined);
    for (const r of RULES) {
      const expected = SAFE.includes(r.id) ? 'rewrite' : BLOCKED.includes(r.id) ? 'block' : 'log';
      assert.deepEqual(p.setting(scope(r.id, 'tools/call', 'send_email')), { action: expected, severity: r.severity }, r.id);
    }
    for (const id of SAFE)
      assert.ok(
        RULES.some((r) => r.id === id),
        `${id} is a rule`,
      );
    assert.ok(
      RULES.filter((r) => r.party === 'client' && !BLOCKED.includes(r.id)).every((r) => p.setting(scope(r.id)).action === 'log'),
      'client-side findings are logged',
    );
  });
});

describe('the JSON Schema', () => {
  test('config/policy.schema.json is what `mcp-warden policy schema` prints', () => {
    const committed = readFileSync(`${ROOT}config/policy.schema.json`, 'utf8');
    assert.equal(
      committed,
      policySchemaJson(RULES),
      'regenerate with: node --import tsx src/cli.ts policy schema > config/policy.schema.json',
    );
  });

  test('src/config/policy-validator.generated.ts is ajv compiling that schema today', () => {
    const committed = readFileSync(`${ROOT}src/config/policy-validator.generated.ts`, 'utf8');
    assert.ok(
      committed === policyValidatorSource(),
      'regenerate with: node --import tsx test/helpers/policy-validator.ts > src/config/policy-validator.generated.ts',
    );
  });

  test('the rules keys are every rule id and every group, each described', () => {
    const schema = buildPolicySchema(RULES) as {
      properties: { rules: { propertyNames: { enum: string[] }; properties: Record<string, { description: string }> } };
    };
    const names = [...new Set([...RULES.map((r) => r.id), ...ruleGroups(RULES)])];
    assert.deepEqual([...schema.properties.rules.propertyNames.enum].sort(), names.sort());
    assert.deepEqual(Object.keys(schema.properties.rules.properties).sort(), names.sort());
    for (const r of RULES) assert.ok(schema.properties.rules.properties[r.id]!.description.includes(r.summary), r.id);
  });

  test('the shipped policies name the schema for editors', () => {
    for (const file of ['audit.yaml', 'enforce.yaml']) {
      assert.match(readFileSync(`${ROOT}config/${file}`, 'utf8'), /^# yaml-language-server: \$schema=\.\/policy\.schema\.json\n/);
    }
  });
});

describe('a rule entry as a list of settings', () => {
  test('the first setting whose scope matches applies: off for some tools, rewrite for the rest', () => {
    const p = compilePolicy(
      { mode: 'enforce', rules: { 'silent-success': [{ action: 'off', tools: ['run_tests', 'search_*'] }, 'rewrite'] } },
      { source: 'test' },
    );
    const at = (tool: string) =>
      p.setting({ rule: 'silent-success', group: 'silent-success', severity: 'warning', method: 'tools/call', tool }).action;
    assert.deepEqual([at('run_tests'), at('search_logs'), at('read_file')], ['off', 'off', 'rewrite']);
  });

  test("a group's list, and a rule's list falling back to it when none of its settings match", () => {
    const p = compilePolicy(
      {
        mode: 'enforce',
        rules: { leaks: [{ action: 'log', tools: ['ping'] }, 'rewrite'], 'leaked-path': [{ action: 'off', tools: ['read_file'] }] },
      },
      { source: 'test' },
    );
    const at = (rule: string, tool: string) => p.setting({ rule, group: 'leaks', severity: 'warning', method: 'tools/call', tool }).action;
    assert.deepEqual(
      [at('leaked-path', 'read_file'), at('leaked-path', 'ping'), at('leaked-path', 'fetch'), at('leaked-stack-trace', 'ping')],
      ['off', 'log', 'rewrite', 'log'],
    );
  });
});

test('silentSuccess.replace with no patterns: silent-success flags nothing, as the load warning says', () => {
  const failure = subject({
    method: 'tools/call',
    tool: 'send',
    params: { name: 'send', arguments: {} },
    response: { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'Error: failed to send the message' }] } },
  });
  const flags = (yaml: string): string[] => {
    const loaded = loadPolicyText(yaml, 'p.yaml');
    assert.ok(loaded.ok);
    return runtimeFactory(() => {})(loaded.policy)
      .engine.evaluate(failure, 'server')
      .map((f) => f.rule);
  };
  assert.ok(flags('mode: audit\n').includes('silent-success'), 'the built-in patterns flag it');
  assert.ok(!flags('mode: audit\npatterns: { silentSuccess: { replace: true } }\n').includes('silent-success'));
});
