// The pure parts of the tool rules: the silent-success and unknown-tool text patterns, the
// arguments validator (dialects, caching, schemas that do not compile), parameter mentions, and
// rules that never throw whatever the subject holds.
import { namesBackendFailure } from '../../src/rules/backend-failure.ts';
import { NO_VERDICT } from '../../src/verdicts.ts';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Message } from '../../src/codec/jsonrpc.ts';
import type { Session } from '../../src/exchange/sessions.ts';
import type { ExchangeSubject } from '../../src/rules/types.ts';
import { ALL } from '../../src/rules/versions.ts';
import {
  SILENT_SUCCESS_PATTERNS,
  TOOL_RULES,
  UNKNOWN_TOOL_TEXT,
  failureStatement,
  mentions,
  validateArguments,
} from '../../src/rules/tools.ts';

describe('silent-success patterns', () => {
  const failures = [
    'Error: something broke',
    'ERROR - disk full',
    'Exception: null pointer',
    'fatal! cannot continue',
    'TypeError: Cannot read properties of undefined (reading "x")',
    'java.io.IOException: stream closed',
    'Failed to fetch https://example.com',
    'Failure: quota exceeded',
    'Request failed with status code 500',
    'Upload failed.',
    'Connection failed: timeout',
    'connect ECONNREFUSED 127.0.0.1:5432',
    'ENOENT: no such file or directory',
    'Fatal error: out of memory',
    "Report failed: ENOENT: no such file or directory, open '/home/deploy/reports/q4.csv'",
    // The failure's own detail: stack frames, advice.
    'TypeError: Cannot read properties of undefined (reading "price")\n    at quote (/srv/app/quote.js:12:5)\n    at process (node:internal/x:1:1)',
    'java.io.IOException: stream closed\n\tat com.acme.Reader.read(Reader.java:42)\n\t... 3 more\nCaused by: java.net.SocketException: reset',
    'Failed to connect to database.\nPlease check DATABASE_URL and try again.',
    'Sorry, something went wrong while deploying. Please try again later.',
    'Something went wrong',
    'Issue #9999 not found',
    // A traceback: its last line is the statement.
    'Traceback (most recent call last):\n  File "/srv/app/server.py", line 88, in get\n    resp.raise_for_status()\nrequests.exceptions.HTTPError: 401 Client Error',
    // A JSON error envelope.
    '{"error":"rate limit exceeded","retryAfterSeconds":60}',
    '{"error":{"message":"quota exceeded","code":429}}',
    '\n\n  Error: after blank lines',
    "Erreur : impossible d'ouvrir le fichier",
    'Fehler: Datei konnte nicht geöffnet werden',
    'Impossible de se connecter à la base de données',
    'No se pudo conectar con el servidor',
    'Ошибка: файл не найден',
    '错误：无法打开文件',
    "open '/x': ENOENT",
    'File not found',
    "User 'bob' not found",
    'Not found',
    'Invalid API key',
    'Permission denied',
    'Access denied for user',
    'Unauthorized',
    'Unable to connect to the database',
    'Could not resolve host: api.example.com',
    'Cannot find module "x"',
    'HTTP/1.1 503 Service Unavailable',
    '404 Not Found',
  ];
  const fine = [
    'echo: hi',
    'The sum of 1 and 2 is 3.',
    'Found 3 results; none were invalid.',
    '2 tests failed, 40 passed',
    'Results: 12 matches, 3 not found in cache',
    'No errors found.',
    'The error rate dropped to 0.1%.',
    'errors: 0',
    'Here is how to handle an Exception in Java: wrap it in try/catch.',
    'The deployment succeeded after a failed attempt.',
    '{"status":"ok","failed":0}',
    'Status 200 OK',
    'Searched 40 files; the pattern was not found in any of them',
    // Tallies: counts of failures are a report, not a failure of the call.
    'Failed: 0, Passed: 42, Skipped: 3',
    'failed: 3, passed: 39',
    '3 tests failed, 39 passed',
    'Errors: 2, Warnings: 5',
    // Log lines: a timestamp, a level, level=.
    'ERROR Error: connect ECONNREFUSED 10.0.3.17:5432',
    '2025-01-12T10:00:02.114Z ERROR Error: connect ECONNREFUSED 10.0.3.17:5432',
    '[ERROR] Failed to connect to database',
    '10:00:02 Error: connect ECONNREFUSED',
    'Jan 12 10:00:02 host app[12]: Failed to start',
    'level=error msg="Failed to connect"',
    // A failure line that is not the statement (first line): quoted content, one line among many.
    'Query ran.\nconnect ECONNREFUSED 127.0.0.1:5432',
    'Result:\nError: partial failure',
    'all good\n  Error: the second line\nthird',
    // More than the failure: a report about something (records, headers, an exit code, prose).
    'Error: failed to open file report.csv\nrow 0: ok\nrow 1: ok',
    'Error: the card was declined.\nInvalid email address.',
    'HTTP/1.1 404 Not Found\ncontent-type: text/html',
    '404 Not Found\n\nThe page you are looking for has moved.',
    'Error: invalid input: 12a\nexit code: 2',
    'Three jobs failed:\n  test:unit, lint',
    // JSON that is not an error envelope: a record with an error field, an error of null.
    '{"job":"nightly","status":"failed","error":"timeout"}',
    '{"error":null,"message":"ok"}',
    '[{"error":"x"}]',
    // A traceback that does not end in an exception, or holds more than frames.
    'Traceback (most recent call last):\n  File "main.py", line 3\nexit code: 1',
    // A code runner's program output: sections come first.
    'exit code: 1\nstdout:\n\nstderr:\nTraceback (most recent call last):\n  File "main.py", line 1\nZeroDivisionError: division by zero',
    'stderr:\nError: boom',
    '{"stdout":"","stderr":"Error: boom","exitCode":1}',
    'Traceback (most recent call last):\n  File "main.py", line 3',
    // Explanations and questions.
    'ENOENT means the file does not exist.',
    'Error: could not open file — this message means the path does not exist.',
    'Invalid JSON usually indicates a trailing comma.',
    'Failed to connect to database?',
    'ECONNREFUSED is raised when nothing listens on the port.',
    // Search results.
    "src/db.ts:42: throw new Error('Failed to connect');",
    '',
  ];
  for (const text of failures) {
    test(`reads as a failure: ${JSON.stringify(text).slice(0, 50)}`, () => assert.ok(failureStatement(text), text));
  }
  for (const text of fine) {
    test(`reads as ordinary output: ${JSON.stringify(text).slice(0, 50)}`, () =>
      assert.equal(failureStatement(text), undefined, `${text} matched ${failureStatement(text)?.pattern}`));
  }
  test('the match names the statement (the first non-blank line) and where it starts', () => {
    const m = failureStatement('\n  Error: the first line\n    at f (x.js:1:2)');
    assert.equal(m?.line, 'Error: the first line');
    assert.equal(m?.index, '\n  '.length);
  });
  test('a policy pattern judges the statement, with the same exclusions', () => {
    assert.ok(failureStatement('Oops, quota exceeded', [/^oops\b/im]));
    assert.equal(failureStatement('fine\nOops, quota exceeded', [/^oops\b/im]), undefined);
    assert.equal(failureStatement('Oops: 0, ok: 3 (failed: 0)', [/^oops\b/im]), undefined);
  });
  test('patterns with the g flag carry no state between calls', () => {
    const patterns = [/^error:/gim];
    for (let i = 0; i < 3; i++) assert.ok(failureStatement('Error: x', patterns));
  });
  test('the default list is exported and holds only RegExps', () => {
    assert.ok(SILENT_SUCCESS_PATTERNS.length >= 8);
    for (const p of SILENT_SUCCESS_PATTERNS) assert.ok(p instanceof RegExp);
  });
});

describe('unknown-tool text', () => {
  for (const text of [
    'Unknown tool: nope',
    'MCP error -32602: Tool nope not found',
    "Tool 'nope' was not found",
    'no such tool: x',
    'Tool not found',
    'tool `x` does not exist',
    "Tool x doesn't exist",
  ]) {
    test(`says the tool is unknown: ${text}`, () => assert.match(text, UNKNOWN_TOOL_TEXT));
  }
  for (const text of [
    'Tool execution failed: file not found',
    'The tool ran but the user was not found',
    'Unknown error',
    'toolbox not found',
  ]) {
    test(`does not: ${text}`, () => assert.doesNotMatch(text, UNKNOWN_TOOL_TEXT));
  }
});

describe('validateArguments', () => {
  const search = {
    type: 'object',
    properties: {
      query: { type: 'string' },
      limit: { type: 'integer', minimum: 1 },
      mode: { enum: ['fast', 'deep'] },
      email: { type: 'string', format: 'email' },
    },
    required: ['query'],
    additionalProperties: false,
  };

  test('valid arguments', () => {
    assert.deepEqual(validateArguments(search, { query: 'q', limit: 3, mode: 'fast' }, '2025-06-18'), { valid: true, errors: [] });
  });

  test('every error, with a pointer to the property at fault and its top-level parameter', () => {
    const v = validateArguments(search, { limit: 0, mode: 'slow', extra: 1 }, '2026-07-28');
    assert.equal(v?.valid, false);
    const byPath = new Map(v!.errors.map((e) => [e.path, e]));
    assert.equal(byPath.get('/query')?.param, 'query');
    assert.match(byPath.get('/query')!.message, /required/);
    assert.equal(byPath.get('/limit')?.param, 'limit');
    assert.match(byPath.get('/mode')!.message, /fast.*deep/);
    assert.equal(byPath.get('/extra')?.param, 'extra');
  });

  test('nested errors name the top-level parameter', () => {
    const schema = { type: 'object', properties: { options: { type: 'object', properties: { 'a/b': { type: 'number' } } } } };
    const v = validateArguments(schema, { options: { 'a/b': 'x' } }, '2025-11-25');
    assert.deepEqual(
      v?.errors.map((e) => [e.path, e.param]),
      [['/options/a~1b', 'options']],
    );
  });

  test('formats are not judged', () => {
    assert.equal(validateArguments(search, { query: 'q', email: 'not an email' }, '2025-11-25')?.valid, true);
  });

  const dependent = {
    type: 'object',
    properties: { from: { type: 'integer' }, to: { type: 'integer' } },
    dependentRequired: { from: ['to'] },
  };
  for (const [version, valid] of [
    ['2024-11-05', true],
    ['2025-06-18', true],
    ['2025-11-25', false],
    ['2026-07-28', false],
  ] as const) {
    test(`the default dialect of ${version} is ${valid ? 'draft-07' : '2020-12'}`, () => {
      assert.equal(validateArguments(dependent, { from: 1 }, version)?.valid, valid);
    });
  }

  test('an explicit $schema wins over the version default', () => {
    assert.equal(
      validateArguments({ ...dependent, $schema: 'http://json-schema.org/draft-07/schema#' }, { from: 1 }, '2026-07-28')?.valid,
      true,
    );
    assert.equal(
      validateArguments({ ...dependent, $schema: 'https://json-schema.org/draft/2020-12/schema' }, { from: 1 }, '2025-06-18')?.valid,
      false,
    );
    assert.equal(
      validateArguments({ ...dependent, $schema: 'https://json-schema.org/draft/2019-09/schema' }, { from: 1 }, '2025-06-18')?.valid,
      false,
    );
    const tuple = { type: 'object', properties: { p: { type: 'array', items: [{ type: 'string' }] } } };
    assert.equal(
      validateArguments({ ...tuple, $schema: 'http://json-schema.org/draft-07/schema' }, { p: [1] }, '2025-11-25')?.valid,
      false,
    );
  });

  test('a dialect it cannot tell means undefined', () => {
    assert.equal(validateArguments(search, { query: 1 }, undefined), undefined);
    assert.equal(validateArguments(search, { query: 1 }, '2099-01-01'), undefined);
    assert.equal(validateArguments({ ...search, $schema: 'http://json-schema.org/draft-04/schema#' }, {}, '2025-06-18'), undefined);
    assert.equal(validateArguments({ ...search, $schema: 42 }, {}, '2025-06-18'), undefined);
    assert.equal(
      validateArguments({ ...search, $schema: 'http://json-schema.org/draft-07/schema#' }, { query: 1 }, undefined)?.valid,
      false,
    );
  });

  test('a schema that does not compile means undefined, every time', () => {
    for (const schema of [
      { type: 'object', properties: { p: { type: 'strin' } } },
      { type: 'object', properties: { p: { type: 'string', pattern: '(?<x' } } },
      { type: 'object', properties: { p: { $ref: '#/$defs/missing' } } },
      { type: 'object', properties: { p: { $ref: 'https://elsewhere.example/schema.json' } } },
    ]) {
      assert.equal(validateArguments(schema, { p: 'x' }, '2025-11-25'), undefined, JSON.stringify(schema));
      assert.equal(validateArguments(schema, { p: 'x' }, '2025-11-25'), undefined, 'cached failure');
    }
  });

  test('no schema object means undefined', () => {
    for (const schema of [undefined, null, true, 'object', [], 3]) assert.equal(validateArguments(schema, {}, '2025-11-25'), undefined);
  });

  test('schemas with the same $id, or a hostile one, do not disturb each other', () => {
    const a = { $id: 'https://example.com/tool', type: 'object', required: ['a'] };
    const b = { $id: 'https://example.com/tool', type: 'object', required: ['b'] };
    assert.equal(validateArguments(a, { b: 1 }, '2025-11-25')?.valid, false);
    assert.equal(validateArguments(b, { b: 1 }, '2025-11-25')?.valid, true);
    const n1 = { type: 'object', properties: { p: { $id: 'https://example.com/p', type: 'number' } } };
    const n2 = { type: 'object', properties: { p: { $id: 'https://example.com/p', type: 'string' } } };
    assert.equal(validateArguments(n1, { p: 'a' }, '2026-07-28')?.valid, false);
    assert.equal(validateArguments(n2, { p: 'a' }, '2026-07-28')?.valid, true);
    const hostile = { $id: 'http://json-schema.org/draft-07/schema', type: 'object' };
    validateArguments(hostile, {}, '2025-06-18');
    assert.equal(
      validateArguments({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', required: ['x'] }, {}, '2025-06-18')?.valid,
      false,
    );
  });

  test('the same schema object gives the same verdicts (compiled once)', () => {
    for (let i = 0; i < 3; i++) {
      assert.equal(validateArguments(search, { query: 'q' }, '2025-11-25')?.valid, true);
      assert.equal(validateArguments(search, {}, '2025-11-25')?.valid, false);
    }
  });

  test('recursive schemas and odd arguments do not throw', () => {
    const tree = { type: 'object', properties: { child: { $ref: '#' }, n: { type: 'number' } } };
    let deep: Record<string, unknown> = { n: 'x' };
    for (let i = 0; i < 200; i++) deep = { child: deep };
    assert.equal(validateArguments(tree, deep, '2026-07-28')?.valid, false);
    for (const args of [undefined, null, 'x', [], { __proto__: { query: 1 } }])
      assert.doesNotThrow(() => validateArguments(search, args, '2025-06-18'));
  });
});

describe('mentions', () => {
  test('names as words, in their usual spellings', () => {
    assert.ok(mentions('query is required', 'query'));
    assert.ok(mentions('"Query" must be a string', 'query'));
    assert.ok(mentions('max_results must be at most 50', 'maxResults'));
    assert.ok(mentions('maxResults must be at most 50', 'max_results'));
    assert.ok(mentions('max results must be at most 50', 'maxResults'));
    assert.ok(mentions('path: a.b is missing', 'a.b'));
  });
  test('not inside other words', () => {
    assert.ok(!mentions('invalid request', 'id'));
    assert.ok(!mentions('queryString missing', 'query'));
    assert.ok(!mentions('', 'query'));
    assert.ok(!mentions('anything', ''));
  });
});

describe('tool rules never throw', () => {
  const session = (complete: boolean): Session => ({
    key: 'k',
    sessionId: undefined,
    protocolVersion: undefined,
    era: undefined,
    serverCapabilities: undefined,
    clientCapabilities: undefined,
    tools: new Map([
      ['echo', { name: 'echo', inputSchema: { type: 'object', required: ['text'] } }],
      ['weird', { name: 'weird', inputSchema: { type: 'object', properties: { p: { pattern: '(' } } } }],
      ['none', { name: 'none', inputSchema: undefined }],
    ]),
    toolsComplete: complete,
    toolsFromFirstPage: complete,
  });
  const responses: Array<Message | undefined> = [
    undefined,
    { kind: 'result', id: 1, result: null, value: {} },
    { kind: 'result', id: 1, result: 'x', value: {} },
    { kind: 'result', id: 1, result: [], value: {} },
    { kind: 'result', id: 1, result: { content: 'x', isError: 1 }, value: {} },
    { kind: 'result', id: 1, result: { content: [null, 1, 'x', { type: 7 }, { type: 'text', text: 5 }], isError: true }, value: {} },
    { kind: 'result', id: 1, result: { content: [{ type: 'text', text: 'Error: x' }], resultType: 5, task: 'x' }, value: {} },
    {
      kind: 'result',
      id: 1,
      result: { tools: [null, { name: 5 }, { name: 'a', inputSchema: null }, { name: 'b', inputSchema: { type: ['object'] } }] },
      value: {},
    },
    { kind: 'result', id: 1, result: { tools: 'x' }, value: {} },
    { kind: 'error', id: 1, code: '-32602', message: 5, data: undefined, value: {} },
    { kind: 'error', id: 1, code: -32601, message: { a: 1 }, data: undefined, value: {} },
    { kind: 'error', id: 1, code: 1.5, message: 'Unknown tool', data: undefined, value: {} },
    { kind: 'invalid', reason: 'x', id: 1, value: 5 },
  ];
  const requests = [
    { method: 'tools/call', tool: 'echo', params: { name: 'echo', arguments: {} } },
    { method: 'tools/call', tool: 'echo', params: { name: 'echo', arguments: 'x' } },
    { method: 'tools/call', tool: 'weird', params: { name: 'weird', arguments: { p: 'x' } } },
    { method: 'tools/call', tool: 'none', params: { name: 'none' } },
    { method: 'tools/call', tool: 'nope', params: { name: 'nope', arguments: null, task: {} } },
    { method: 'tools/call', tool: undefined, params: null },
    { method: 'tools/list', tool: undefined, params: undefined },
  ];
  test('on any mix of request, response, version and catalogue', () => {
    let reports = 0;
    for (const version of [undefined, 'garbage', ...ALL]) {
      for (const complete of [true, false]) {
        for (const r of requests) {
          for (const response of responses) {
            const s: ExchangeSubject = {
              kind: 'exchange',
              version,
              request: {
                scope: 's',
                from: 'client',
                id: 1,
                method: r.method,
                tool: r.tool,
                params: r.params,
                sessionId: undefined,
                protocolVersion: version,
                startedAt: 0,
                requestBytes: 0,
                headers: {},
                verdict: NO_VERDICT,
              },
              requestHeaders: {},
              response,
              outcome: 'x',
              status: 200,
              contentType: 'application/json',
              transport: 'json',
              proxyError: undefined,
              bodyProblem: undefined,
              unmatched: [],
              session: session(complete),
            };
            for (const rule of TOOL_RULES) {
              if (rule.subject !== 'exchange') continue;
              const out = rule.check(s);
              assert.ok(Array.isArray(out));
              for (const f of out)
                for (const k of ['message', 'pointer', 'evidence', 'fix'] as const) assert.equal(typeof f[k], 'string', `${rule.id}.${k}`);
              reports += out.length;
            }
          }
        }
      }
    }
    assert.ok(reports > 0);
  });

  test('ids, groups, severities and versions are what policies name', () => {
    const table = Object.fromEntries(TOOL_RULES.map((r) => [r.id, [r.group, r.severity, r.versions.join(',')]]));
    const all = ALL.join(',');
    assert.deepEqual(table, {
      'unknown-tool-as-iserror': ['unknown-tool', 'error', all],
      'unknown-tool-as-result': ['unknown-tool', 'error', all],
      'unknown-tool-wrong-code': ['unknown-tool', 'error', all],
      'silent-success': ['silent-success', 'warning', all],
      'iserror-not-boolean': ['tools', 'error', all],
      'tool-result-shape': ['tools', 'error', all],
      'tools-list-shape': ['tools', 'error', all],
      'input-validation-as-protocol-error': ['input-validation', 'warning', '2025-11-25,2026-07-28'],
      'vague-iserror': ['input-validation', 'warning', all],
      'tool-failure-as-protocol-error': ['tools', 'warning', all],
    });
  });
});

describe('silent-success patterns: success texts that only look like failures', () => {
  for (const text of [
    'No tests failed.',
    'Nothing failed.',
    'Error-free run: 3 files',
    "if (err.code === 'ENOENT') retry()",
    'Could not find any results for "cats"',
    // "Error <verb>ing" by shape only when an exception's name ends the clause: these are titles.
    'Error handling: TypeError, RangeError and more',
    'Error handling in Node: TypeError explained',
    'Error searching: no results for cats',
  ]) {
    test(`"${text}" is not a failure`, () => {
      assert.equal(failureStatement(text), undefined);
    });
  }
  for (const text of [
    'Upload failed.',
    'Error - disk full',
    'ENOENT: no such file or directory',
    'Could not resolve host api.example.com',
    // By shape, whatever the verb (issue 43).
    'Error searching libraries: TypeError: fetch failed',
    'Error resolving library id: FetchError',
    'Error listing pods: connect ECONNREFUSED 10.0.0.1:443',
  ]) {
    test(`"${text}" is a failure`, () => {
      assert.ok(failureStatement(text));
    });
  }
});

describe('namesBackendFailure: what vague-iserror leaves alone', () => {
  for (const text of [
    'Error searching libraries: TypeError: fetch failed',
    'connect ECONNREFUSED 10.0.0.5:5432',
    'dial tcp 127.0.0.1:6443: connect: connection refused',
    'getaddrinfo ENOTFOUND api.example.com',
    'Get "https://api.example.com": dial tcp: lookup api.example.com: no such host',
    'The request timed out after 30s',
    'upstream: 503 Service Unavailable',
    'DNS lookup failed for api.example.com',
  ]) {
    test(`"${text}" names a backend failure`, () => assert.ok(namesBackendFailure(text)));
  }
  for (const text of [
    'timeout must be between 1 and 60',
    'Invalid DNSSEC flag',
    'limit must be at least 1',
    'Bad request',
    'query is required',
    'Something went wrong, please try again.',
  ]) {
    test(`"${text}" does not`, () => assert.equal(namesBackendFailure(text), false));
  }
});
