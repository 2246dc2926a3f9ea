// Policy validation: a bad file gets every error, each naming file, line and column, the key,
// what was found and what is allowed. The texts are asserted exactly: they are the interface.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { formatPolicyError, loadPolicyFile, loadPolicyText } from '../../src/config/load.ts';
import type { RuleInfo } from '../../src/rules/types.ts';

const rule = (id: string, group: string, severity: RuleInfo['severity'] = 'error', party: RuleInfo['party'] = 'server'): RuleInfo => ({
  id,
  group,
  severity,
  party,
  versions: ['2025-11-25'],
  summary: `the ${id} rule`,
  source: 'test',
});

/** A small catalogue, so the texts that list rules and groups stay stable when rules are added. */
const TEST_RULES: readonly RuleInfo[] = [
  rule('unknown-tool-as-iserror', 'unknown-tool'),
  rule('silent-success', 'silent-success', 'warning'),
  rule('legacy-range-code', 'codes', 'warning'),
  rule('html-body', 'bodies'),
  rule('accept-header', 'client', 'error', 'client'),
  rule('leaked-path', 'leaks', 'warning'),
  rule('leaked-internal-host', 'leaks', 'warning'),
];
const GROUPS = 'unknown-tool, silent-success, codes, bodies, client, leaks';

/** The formatted errors of a policy text (empty when it loads). */
function errors(text: string, file = 'config/x.yaml'): string[] {
  const result = loadPolicyText(text, file, { rules: TEST_RULES });
  return result.ok ? [] : result.errors.map(formatPolicyError);
}

const yaml = (lines: string[]): string => `${lines.join('\n')}\n`;

describe('wrong types', () => {
  test('scalars, lists and mappings where another kind is expected', () => {
    assert.deepEqual(
      errors(
        yaml([
          'mode: 3',
          'upstream: [a, b]',
          'log:',
          '  arguments: yes',
          'patterns:',
          '  silentSuccess:',
          '    replace: "true"',
          'rules:',
          '  html-body: 42',
          '  silent-success: { action: rewrite, tools: send_* }',
        ]),
      ),
      [
        'config/x.yaml:1:7: mode: expected one of audit|enforce, found 3',
        'config/x.yaml:2:11: upstream: expected a mapping, found a list',
        'config/x.yaml:4:14: log.arguments: expected one of off|redacted|full, found "yes"',
        'config/x.yaml:7:14: patterns.silentSuccess.replace: expected true or false, found "true"',
        "config/x.yaml:9:14: rules.html-body: expected an action (off|log|rewrite|block), a mapping such as { action: rewrite, severity: error, tools: ['send_*'] }, or a list of those, found 42",
        "config/x.yaml:10:45: rules.silent-success.tools: expected a list of name patterns such as ['tools/call'] or ['send_*'], found \"send_*\"",
      ],
    );
  });

  test('a misspelt value suggests the closest allowed one', () => {
    assert.deepEqual(
      errors(
        yaml([
          'mode: enforc',
          'log:',
          '  level: warning',
          'defaults:',
          '  action: rewrit',
          'rules:',
          '  html-body: blok',
          '  silent-success: { action: log, severity: warn }',
        ]),
      ),
      [
        'config/x.yaml:1:7: mode: expected one of audit|enforce, found "enforc"; did you mean "enforce"?',
        'config/x.yaml:3:10: log.level: expected one of trace|debug|info|warn|error, found "warning"; did you mean "warn"?',
        'config/x.yaml:5:11: defaults.action: expected one of off|log|rewrite|block, found "rewrit"; did you mean "rewrite"?',
        'config/x.yaml:7:14: rules.html-body: expected one of off|log|rewrite|block, found "blok"; did you mean "block"?',
        'config/x.yaml:8:44: rules.silent-success.severity: expected one of error|warning|info, found "warn"; did you mean "warning"?',
      ],
    );
  });

  test('an empty value where a value is needed points at its key', () => {
    assert.deepEqual(errors(yaml(['upstream:', '  timeout:', 'mode:'])), [
      'config/x.yaml:2:3: upstream.timeout: expected a duration such as 500ms, 30s, 5m or a number of milliseconds, found an empty value',
      'config/x.yaml:3:1: mode: expected one of audit|enforce, found an empty value',
    ]);
  });

  test('empty lists and entries that set nothing', () => {
    assert.deepEqual(
      errors(yaml(['rules:', '  html-body: { action: block, methods: [] }', '  codes: { tools: [send_email] }', 'capture: {}'])),
      [
        "config/x.yaml:2:40: rules.html-body.methods: expected at least one name pattern such as 'tools/call', found an empty list (leave methods out to match every name)",
        'config/x.yaml:3:10: rules.codes: the entry sets neither action nor severity; allowed: { action: off|log|rewrite|block, severity: error|warning|info, methods: [...], tools: [...] }',
        'config/x.yaml:4:10: capture: missing key "path"; required: path',
      ],
    );
  });
});

describe('unknown rule ids and groups', () => {
  test('name the key, list the groups, and suggest the closest id or group', () => {
    assert.deepEqual(errors(yaml(['rules:', '  unknown-tol: rewrite', '  leak: rewrite', '  html_body: block', '  no-such-rule: off'])), [
      `config/x.yaml:2:3: rules.unknown-tol: unknown rule or group "unknown-tol"; allowed: a rule id (see mcp-warden rules) or a group: ${GROUPS}; did you mean "unknown-tool"?`,
      `config/x.yaml:3:3: rules.leak: unknown rule or group "leak"; allowed: a rule id (see mcp-warden rules) or a group: ${GROUPS}; did you mean "leaks"?`,
      `config/x.yaml:4:3: rules.html_body: unknown rule or group "html_body"; allowed: a rule id (see mcp-warden rules) or a group: ${GROUPS}; did you mean "html-body"?`,
      `config/x.yaml:5:3: rules.no-such-rule: unknown rule or group "no-such-rule"; allowed: a rule id (see mcp-warden rules) or a group: ${GROUPS}`,
    ]);
  });

  test('the real catalogue: every group is listed', () => {
    const result = loadPolicyText('rules:\n  unknown-tol: rewrite\n', 'p.yaml');
    assert.equal(result.ok, false);
    const text = result.ok ? '' : formatPolicyError(result.errors[0]!);
    assert.match(
      text,
      /^p\.yaml:2:3: rules\.unknown-tol: unknown rule or group "unknown-tol"; allowed: a rule id \(see mcp-warden rules\) or a group: unknown-tool, .*\bleaks\b.*; did you mean "unknown-tool"\?$/,
    );
  });
});

describe('unknown keys', () => {
  test('at the top level, in a section, in a list item and in a rule entry, with the allowed keys', () => {
    assert.deepEqual(
      errors(
        yaml([
          'mode: audit',
          'rulez: {}',
          'upstream:',
          '  timout: 5s',
          'patterns:',
          '  leaks:',
          '    - { rule: leaked-path, pattern: secret-dir, flags: i }',
          'rules:',
          '  silent-success: { action: rewrite, tool: [send_email] }',
        ]),
      ),
      [
        'config/x.yaml:2:1: rulez: unknown key "rulez" at the top level; allowed: mode, upstream, security, limits, log, redaction, answers, patterns, scope, capture, defaults, rules; did you mean "rules"?',
        'config/x.yaml:4:3: upstream.timout: unknown key "timout" in upstream; allowed: url, timeout, idleTimeout, connectTimeout, hostHeader, transport; did you mean "timeout"?',
        'config/x.yaml:7:49: patterns.leaks[0].flags: unknown key "flags" in patterns.leaks[0]; allowed: rule, pattern',
        'config/x.yaml:9:38: rules.silent-success.tool: unknown key "tool" in rules.silent-success; allowed: action, severity, methods, tools; did you mean "tools"?',
      ],
    );
  });
});

describe('bad patterns', () => {
  test('invalid regular expressions, a backspace from double quotes, patterns that match everything', () => {
    assert.deepEqual(
      errors(
        yaml([
          'patterns:',
          '  leaks:',
          '    - rule: leaked-internal-host',
          "      pattern: '\\bvault-(prod'",
          '    - rule: leaked-path',
          '      pattern: "\\bsecrets\\b"',
          '  silentSuccess:',
          "    add: ['^oops[', 'fail|', '(?<name>x']",
        ]),
      ),
      [
        'config/x.yaml:4:16: patterns.leaks[0].pattern: invalid regular expression: Unterminated group, found "\\bvault-(prod"',
        'config/x.yaml:6:16: patterns.leaks[1].pattern: the pattern holds a backspace character: in double quotes YAML reads "\\b" as a backspace; write the pattern in single quotes (\'\\bword\\b\')',
        'config/x.yaml:8:11: patterns.silentSuccess.add[0]: invalid regular expression: Unterminated character class, found "^oops["',
        'config/x.yaml:8:21: patterns.silentSuccess.add[1]: the pattern "fail|" matches an empty text, so it would match every text; allowed: a regular expression that needs at least one character',
        'config/x.yaml:8:30: patterns.silentSuccess.add[2]: invalid regular expression: Unterminated group, found "(?<name>x"',
      ],
    );
  });

  test('a leak pattern must name a leak rule', () => {
    assert.deepEqual(
      errors(
        yaml([
          'patterns:',
          '  leaks:',
          "    - { rule: html-body, pattern: 'x' }",
          "    - { rule: leaked-paths, pattern: 'x' }",
          "    - { rule: leaks, pattern: 'x' }",
          "    - { pattern: 'x' }",
        ]),
      ),
      [
        'config/x.yaml:3:15: patterns.leaks[0].rule: "html-body" is not a leak rule (its group is bodies); allowed: leaked-path, leaked-internal-host',
        'config/x.yaml:4:15: patterns.leaks[1].rule: unknown leak rule "leaked-paths"; allowed: leaked-path, leaked-internal-host; did you mean "leaked-path"?',
        'config/x.yaml:5:15: patterns.leaks[2].rule: unknown leak rule "leaks"; allowed: leaked-path, leaked-internal-host',
        'config/x.yaml:6:7: patterns.leaks[3]: missing key "rule"; required: rule, pattern',
      ],
    );
  });

  test('a double-quoted regex with \\s is a YAML escape error that says to use single quotes', () => {
    assert.deepEqual(errors(yaml(['patterns:', '  silentSuccess:', '    add: ["^\\s*oops"]'])), [
      'config/x.yaml:3:13: YAML syntax error: Invalid escape sequence \\s (in double quotes YAML reads backslashes as escapes: write regular expressions in single quotes)',
    ]);
  });
});

describe('bad durations, sizes and URLs', () => {
  test("each is checked by the command line's parser and named with what it accepts", () => {
    assert.deepEqual(
      errors(
        yaml([
          'upstream:',
          '  url: localhost:3000/mcp',
          '  timeout: 1h',
          '  idleTimeout: -5',
          '  connectTimeout: true',
          'limits:',
          '  maxRequestBody: 4 megs',
          '  auditBody: 1.5.2kb',
          '  auditEvent: [1]',
          '  maxSessions: 0',
          '  sessionIdle: forever',
        ]),
      ),
      [
        'config/x.yaml:2:8: upstream.url: expected an http(s) URL such as http://127.0.0.1:3000/mcp, found "localhost:3000/mcp"',
        'config/x.yaml:3:12: upstream.timeout: expected a duration such as 500ms, 30s, 5m or a number of milliseconds, found "1h"',
        'config/x.yaml:4:16: upstream.idleTimeout: expected a duration such as 500ms, 30s, 5m or a number of milliseconds, found -5',
        'config/x.yaml:5:19: upstream.connectTimeout: expected a duration such as 500ms, 30s, 5m or a number of milliseconds, found true',
        'config/x.yaml:7:19: limits.maxRequestBody: expected a size such as 512kb, 4mib or a number of bytes, found "4 megs"',
        'config/x.yaml:8:14: limits.auditBody: expected a size such as 512kb, 4mib or a number of bytes, found "1.5.2kb"',
        'config/x.yaml:9:15: limits.auditEvent: expected a size such as 512kb, 4mib or a number of bytes, found a list',
        'config/x.yaml:10:16: limits.maxSessions: expected a whole number of at least 1, found 0',
        'config/x.yaml:11:16: limits.sessionIdle: expected a duration such as 500ms, 30s, 5m or a number of milliseconds, found "forever"',
      ],
    );
  });

  test('good ones load', () => {
    assert.deepEqual(
      errors(
        yaml([
          'upstream:',
          '  url: https://mcp.example.com/mcp',
          '  timeout: 500ms',
          '  idleTimeout: 0',
          'limits:',
          '  auditBody: 512kb',
          '  auditEvent: 1048576',
          '  maxSessions: 50000',
          '  sessionIdle: 5m',
        ]),
      ),
      [],
    );
  });
});

describe('YAML syntax', () => {
  test("syntax errors carry the yaml parser's line and column", () => {
    assert.deepEqual(errors(yaml(['mode: audit', 'rules: [unknown-tool', 'defaults: {}'])), [
      'config/x.yaml:3:1: YAML syntax error: Flow sequence in block collection must be sufficiently indented and end with a ]',
    ]);
    assert.deepEqual(errors(yaml(['upstream:', '  timeout: 5s', ' idleTimeout: 5m'])), [
      'config/x.yaml:3:1: YAML syntax error: All mapping items must start at the same column',
    ]);
  });

  test('a duplicate key names the key', () => {
    assert.deepEqual(errors(yaml(['mode: audit', 'rules:', '  html-body: log', '  html-body: block'])), [
      'config/x.yaml:4:3: duplicate key "html-body"; a key may appear once in a mapping',
    ]);
  });

  test('an empty file, a list, two documents, a key that is not a name', () => {
    assert.deepEqual(errors(''), [
      'config/x.yaml:1:1: the policy is empty; expected a mapping such as "mode: audit" (write {} for every default)',
    ]);
    assert.deepEqual(errors('# nothing but a comment\n'), [
      'config/x.yaml:1:1: the policy is empty; expected a mapping such as "mode: audit" (write {} for every default)',
    ]);
    assert.deepEqual(errors('- mode: audit\n'), [
      'config/x.yaml:1:1: expected a mapping of policy keys (mode, upstream, security, limits, log, redaction, answers, patterns, scope, capture, defaults, rules), found a list',
    ]);
    assert.deepEqual(errors('mode: audit\n---\nmode: enforce\n'), [
      'config/x.yaml:2:1: the file holds more than one YAML document (---); a policy is one document',
    ]);
    assert.deepEqual(errors('rules:\n  [html-body]: block\n'), ['config/x.yaml:2:3: expected a plain key (a name), found a list']);
    assert.deepEqual(errors('mode: !enforce audit\n'), ['config/x.yaml:1:7: YAML syntax error: Unresolved tag: !enforce']);
    assert.deepEqual(errors('mode: audit\nrules: *missing\n'), [
      'config/x.yaml:2:8: YAML: Unresolved alias (the anchor must be set before the alias): missing',
    ]);
    assert.deepEqual(errors('{}\n'), []);
  });
});

test('several errors at once: all of them, in file order', () => {
  const text = yaml([
    '# yaml-language-server: $schema=./policy.schema.json',
    'mode: enforced',
    'upstream:',
    '  url: http://127.0.0.1:3000/mcp',
    '  timeout: soon',
    'log:',
    '  level: loud',
    'rules:',
    '  unknown-tool: rewrite',
    '  leaks: { action: rewrite }',
    "  silent-success: { action: rewrite, severity: error, tools: ['send_*', 'notify_*'] }",
    '  legacy-range-code: of',
    '  html-body: { action: block, methods: [tools/call], tool: [x] }',
    '  codez: log',
    'patterns:',
    '  leaks:',
    '    - rule: leaked-internal-host',
    "      pattern: '\\bvault-[a-z0-9-]+\\b'",
    '    - rule: leaked-path',
    "      pattern: '['",
  ]);
  assert.deepEqual(errors(text, 'config/enforce-typo.yaml'), [
    'config/enforce-typo.yaml:2:7: mode: expected one of audit|enforce, found "enforced"; did you mean "enforce"?',
    'config/enforce-typo.yaml:5:12: upstream.timeout: expected a duration such as 500ms, 30s, 5m or a number of milliseconds, found "soon"',
    'config/enforce-typo.yaml:7:10: log.level: expected one of trace|debug|info|warn|error, found "loud"',
    'config/enforce-typo.yaml:12:22: rules.legacy-range-code: expected one of off|log|rewrite|block, found "of"; did you mean "off"?',
    'config/enforce-typo.yaml:13:54: rules.html-body.tool: unknown key "tool" in rules.html-body; allowed: action, severity, methods, tools; did you mean "tools"?',
    `config/enforce-typo.yaml:14:3: rules.codez: unknown rule or group "codez"; allowed: a rule id (see mcp-warden rules) or a group: ${GROUPS}; did you mean "codes"?`,
    'config/enforce-typo.yaml:20:16: patterns.leaks[1].pattern: invalid regular expression: Unterminated character class, found "["',
  ]);
});

test('positions follow anchors and aliases to the node that was written', () => {
  assert.deepEqual(errors(yaml(['defaults: &d', '  action: rewrit', 'rules:', '  html-body: *d'])), [
    'config/x.yaml:2:11: defaults.action: expected one of off|log|rewrite|block, found "rewrit"; did you mean "rewrite"?',
    'config/x.yaml:2:11: rules.html-body.action: expected one of off|log|rewrite|block, found "rewrit"; did you mean "rewrite"?',
  ]);
});

describe('loadPolicyFile and formatPolicyError', () => {
  test('a file that cannot be read is an error without a line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'warden-policy-'));
    try {
      const missing = join(dir, 'missing.yaml');
      const result = await loadPolicyFile(missing);
      assert.equal(result.ok, false);
      assert.deepEqual(result.ok ? [] : result.errors.map(formatPolicyError), [`${missing}: cannot read the policy file: no such file`]);
      const asDir = await loadPolicyFile(dir);
      assert.deepEqual(asDir.ok ? [] : asDir.errors.map(formatPolicyError), [`${dir}: cannot read the policy file: it is a directory`]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('the parts of an error', () => {
    const result = loadPolicyText('upstream:\n  timout: 5s\n', 'a.yaml', { rules: TEST_RULES });
    assert.equal(result.ok, false);
    assert.deepEqual(result.ok ? undefined : result.errors[0], {
      file: 'a.yaml',
      line: 2,
      column: 3,
      key: 'upstream.timout',
      message:
        'unknown key "timout" in upstream; allowed: url, timeout, idleTimeout, connectTimeout, hostHeader, transport; did you mean "timeout"?',
    });
    assert.equal(formatPolicyError({ file: 'a.yaml', line: 1, column: 1, key: '', message: 'm' }), 'a.yaml:1:1: m');
    assert.equal(formatPolicyError({ file: 'a.yaml', line: 0, column: 0, key: '', message: 'm' }), 'a.yaml: m');
  });
});

describe('the policy schema', () => {
  // Policies are validated without checking the schema itself each time (it cost every start ~35 ms): checked here instead.
  test('is a valid JSON Schema (draft-07 meta-schema), in strict mode', async () => {
    const { Ajv } = await import('ajv');
    const { buildPolicySchema } = await import('../../src/config/schema.ts');
    const { RULES } = await import('../../src/rules/index.ts');
    const ajv = new Ajv({ allErrors: true, allowUnionTypes: true, strict: true });
    const schema = buildPolicySchema(RULES);
    assert.equal(ajv.validateSchema(schema), true, JSON.stringify(ajv.errors));
    assert.doesNotThrow(() => ajv.compile(schema));
  });
});
