// The rewriters on hand-built subjects: every rewriter under each version where its behaviour
// differs, with the exact output; chains applied one after another on the same message (as
// decide() does, in catalogue order); cases with nothing to change; odd inputs that must never
// throw. Every message a rewriter returns is validated against the official schema of the
// subject's version (test/helpers/schema-check.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BODY_RULES } from '../../src/rules/bodies.ts';
import { CODE_RULES } from '../../src/rules/codes.ts';
import { docBlock } from '../helpers/doc-blocks.ts';
import { LEAK_PATTERNS, LEAK_RULES, findLeaks } from '../../src/rules/leaks.ts';
import { TOOL_RULES } from '../../src/rules/tools.ts';
import type { ExchangeRule, ExchangeSubject } from '../../src/rules/types.ts';
import { redactStack, replaceSpans } from '../../src/rewrite/leak-rewriters.ts';
import { POST_REWRITABLE } from '../../src/rewrite/post-rewrite.ts';
import { REWRITABLE, REWRITERS } from '../../src/rewrite/rewriters.ts';
import type { ResponseMessage, Rewriter, Rewritten } from '../../src/rewrite/types.ts';
import { assertValidResponse, SCHEMA_VERSIONS } from '../helpers/schema-check.ts';
import { ALL_VERSIONS, LEGACY_VERSIONS, MODERN, errorMsg, finding, resultMsg, subject, toolResult } from '../helpers/subject.ts';

const MARKER = '[redacted]';

const rewriterFor = (rule: string): Rewriter => {
  const found = REWRITERS.find((r) => r.rules.includes(rule));
  assert.ok(found, `a rewriter handles ${rule}`);
  return found;
};

/** What decide() hands the first rewriter: a copy of the matched response's value, if any. */
const original = (s: ExchangeSubject): ResponseMessage | undefined =>
  s.response && s.response.kind !== 'request' && s.response.kind !== 'notification'
    ? (structuredClone(s.response.value) as ResponseMessage)
    : undefined;

/**
 * Runs one rewriter for one finding, on `opts.message` if given (even undefined), else on the
 * subject's response; validates what it returns against the version's schema.
 */
function run(
  rule: string,
  s: ExchangeSubject,
  opts: { message?: ResponseMessage | undefined; marker?: string } = {},
): Rewritten | undefined {
  const input = 'message' in opts ? opts.message : original(s);
  const out = rewriterFor(rule).apply(input, { subject: s, finding: finding(rule), marker: opts.marker ?? MARKER });
  if (out && s.version !== undefined && (SCHEMA_VERSIONS as readonly string[]).includes(s.version))
    assertValidResponse(out.message, s.version, s.request.method);
  return out;
}

/** Applies the rewriters of `rules`, in order, on one message, as decide() does; the final message and status. */
function chain(
  s: ExchangeSubject,
  rules: readonly string[],
): { message: ResponseMessage | undefined; status: number | undefined; applied: string[] } {
  let message = original(s);
  let status: number | undefined;
  const applied: string[] = [];
  for (const rule of rules) {
    const out = run(rule, s, { message });
    if (!out) continue;
    message = out.message;
    status = out.status ?? status;
    applied.push(rule);
  }
  return { message, status, applied };
}

/** The rule ids of the README's catalogue table, in catalogue order. */
const catalogue = (): string[] => {
  return [...docBlock('rules').matchAll(/^\| `([a-z0-9-]+)` \|/gm)].map((m) => m[1]!);
};

describe('the rewriter list', () => {
  test('REWRITABLE names the rules the issue asks for, each handled by exactly one rewriter', () => {
    assert.deepEqual([...REWRITABLE].sort(), [
      'answer-id-type',
      'empty-body',
      'error-id-null',
      'error-shape',
      'error-status-pairing',
      'html-body',
      'iserror-not-boolean',
      'leaked-internal-host',
      'leaked-path',
      'leaked-private-address',
      'leaked-stack-trace',
      'legacy-range-code',
      'no-response',
      'non-json-body',
      'non-utf8-body',
      'not-jsonrpc-body',
      'parse-error-unanswered',
      'reserved-code',
      'resource-not-found-code',
      'result-type-missing',
      'retired-code',
      'silent-success',
      'stdio-embedded-newline',
      'unknown-method-status',
      'unknown-method-wrong-code',
      'unknown-tool-as-iserror',
      'unknown-tool-as-result',
      'unknown-tool-unanswered',
      'unknown-tool-wrong-code',
    ]);
    const all = [...REWRITERS.flatMap((r) => r.rules), ...POST_REWRITABLE];
    assert.equal(new Set(all).size, all.length);
  });

  test('every rule id is in the catalogue, and the rewriters come in catalogue order', () => {
    const ids = catalogue();
    for (const rule of REWRITABLE) assert.ok(ids.includes(rule), rule);
    const firsts = REWRITERS.map((r) => Math.min(...r.rules.map((rule) => ids.indexOf(rule))));
    assert.deepEqual(
      firsts,
      [...firsts].sort((a, b) => a - b),
    );
  });
});

describe('unknown tool → -32602 "Unknown tool: NAME"', () => {
  for (const version of ALL_VERSIONS) {
    test(`${version}: an isError result, a plain result and a wrong code become the same error`, () => {
      const text = 'MCP error -32602: Tool nope not found';
      const iserror = subject({ version, tool: 'nope', response: resultMsg(toolResult(text, { isError: true }, version)) });
      assert.deepEqual(run('unknown-tool-as-iserror', iserror), {
        message: { jsonrpc: '2.0', id: 7, error: { code: -32602, message: 'Unknown tool: nope', data: { serverMessage: text } } },
        status: 200,
      });
      const plain = subject({ version, tool: 'nope', catalogue: ['echo'], response: resultMsg(toolResult('ran nope', {}, version)) });
      assert.deepEqual(run('unknown-tool-as-result', plain)?.message.error, {
        code: -32602,
        message: 'Unknown tool: nope',
        data: { serverMessage: 'ran nope' },
      });
      const wrong = subject({
        version,
        id: 'call-1',
        tool: 'nope',
        response: errorMsg(-32601, 'Tool nope not found', undefined, 'call-1'),
      });
      assert.deepEqual(run('unknown-tool-wrong-code', wrong), {
        message: {
          jsonrpc: '2.0',
          id: 'call-1',
          error: { code: -32602, message: 'Unknown tool: nope', data: { serverMessage: 'Tool nope not found', originalCode: -32601 } },
        },
        status: 200,
      });
    });
  }

  test('no server text: no data; a result that is a string is its text', () => {
    const empty = subject({ tool: 'nope', response: resultMsg({ content: [], isError: true, resultType: 'complete' }) });
    assert.deepEqual(run('unknown-tool-as-iserror', empty)?.message, {
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32602, message: 'Unknown tool: nope' },
    });
    const stringy = subject({ version: '2025-06-18', tool: 'nope', response: resultMsg('no such tool') });
    assert.deepEqual(run('unknown-tool-as-result', stringy)?.message.error?.data, { serverMessage: 'no such tool' });
    // Nothing the server sent (the message is built from the request alone).
    assert.deepEqual(run('unknown-tool-as-result', subject({ tool: 'nope' }), { message: undefined })?.message, {
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32602, message: 'Unknown tool: nope' },
    });
  });

  test('nothing to change: already -32602, not a tools/call, a request from the server', () => {
    assert.equal(run('unknown-tool-wrong-code', subject({ tool: 'nope', response: errorMsg(-32602, 'Tool nope not found') })), undefined);
    assert.equal(
      run('unknown-tool-as-result', subject({ method: 'prompts/get', response: resultMsg({ messages: [], resultType: 'complete' }) })),
      undefined,
    );
    assert.equal(run('unknown-tool-as-result', subject({ from: 'server', tool: 'nope', response: resultMsg(toolResult('x')) })), undefined);
  });
});

describe('tool results', () => {
  for (const version of ALL_VERSIONS) {
    test(`${version}: silent-success sets isError: true`, () => {
      const s = subject({ version, response: resultMsg(toolResult('Error: upstream refused', {}, version)) });
      assert.deepEqual(run('silent-success', s), { message: resultMsg(toolResult('Error: upstream refused', { isError: true }, version)) });
      const explicitFalse = subject({ version, response: resultMsg(toolResult('Error: x', { isError: false }, version)) });
      assert.equal((run('silent-success', explicitFalse)!.message.result as { isError?: unknown }).isError, true);
    });
  }

  test('silent-success: nothing to change on an isError result, an error, another method', () => {
    assert.equal(run('silent-success', subject({ response: resultMsg(toolResult('Error: x', { isError: true })) })), undefined);
    assert.equal(run('silent-success', subject({ response: errorMsg(-32603, 'Error: x') })), undefined);
    assert.equal(
      run('silent-success', subject({ method: 'prompts/get', response: resultMsg({ messages: [], resultType: 'complete' }) })),
      undefined,
    );
  });

  test('iserror-not-boolean: "true"/"false" and 1/0 become booleans, anything else is left', () => {
    const cases: Array<[unknown, boolean | undefined]> = [
      ['true', true],
      [' FALSE ', false],
      ['True', true],
      [1, true],
      [0, false],
      ['yes', undefined],
      [null, undefined],
      [2, undefined],
      [{}, undefined],
    ];
    for (const version of ['2024-11-05', MODERN]) {
      for (const [value, want] of cases) {
        const out = run('iserror-not-boolean', subject({ version, response: resultMsg(toolResult('x', { isError: value }, version)) }));
        assert.deepEqual(
          out?.message.result,
          want === undefined ? undefined : toolResult('x', { isError: want }, version),
          `${version} ${JSON.stringify(value)}`,
        );
      }
    }
  });

  test('result-type-missing: 2026-07-28 only, sets "complete"', () => {
    const s = subject({ response: resultMsg({ content: [{ type: 'text', text: 'ok' }] }) });
    assert.deepEqual(run('result-type-missing', s), {
      message: resultMsg({ content: [{ type: 'text', text: 'ok' }], resultType: 'complete' }),
    });
    const list = subject({ method: 'tools/list', response: resultMsg({ tools: [], ttlMs: 0, cacheScope: 'public' }) });
    assert.deepEqual(run('result-type-missing', list)?.message.result, {
      tools: [],
      ttlMs: 0,
      cacheScope: 'public',
      resultType: 'complete',
    });
    for (const version of LEGACY_VERSIONS)
      assert.equal(run('result-type-missing', subject({ version, response: resultMsg({ content: [] }) })), undefined);
    assert.equal(run('result-type-missing', subject({ response: resultMsg(toolResult('ok')) })), undefined);
    assert.equal(run('result-type-missing', subject({ response: resultMsg(null) })), undefined);
    assert.equal(run('result-type-missing', subject({ response: errorMsg(-32603, 'x') })), undefined);
  });
});

describe('codes', () => {
  for (const version of ALL_VERSIONS) {
    test(`${version}: reserved and legacy-range codes become -32603, the original kept in data`, () => {
      const reserved = subject({ version, response: errorMsg(-32150, 'weird') });
      assert.deepEqual(run('reserved-code', reserved), { message: errorMsg(-32603, 'weird', { originalCode: -32150 }) });
      const object = subject({ version, response: errorMsg(-32000, 'Bad Request', { detail: 'x' }) });
      assert.deepEqual(run('legacy-range-code', object), {
        message: errorMsg(-32603, 'Bad Request', { detail: 'x', originalCode: -32000 }),
      });
      const scalar = subject({ version, response: errorMsg(-32001, 'Request timed out', 'slow') });
      assert.deepEqual(run('legacy-range-code', scalar), {
        message: errorMsg(-32603, 'Request timed out', { originalCode: -32001, originalData: 'slow' }),
      });
    });
  }

  test("a transport rejection (4xx) gets -32600, as the finding's fix says; a 5xx is a failure, -32603", () => {
    for (const version of ALL_VERSIONS) {
      for (const status of [400, 404, 406, 415]) {
        const s = subject({ version, status, response: errorMsg(-32000, 'Bad Request: No valid session ID provided') });
        assert.deepEqual(run('legacy-range-code', s), {
          message: errorMsg(-32600, 'Bad Request: No valid session ID provided', { originalCode: -32000 }),
        });
        // Under 2026-07-28 such a 4xx is a legacy-only server's answer to an era probe: not judged (error-answers.ts probeAnswer).
        const fix = CODE_RULES.find((r) => r.id === 'legacy-range-code')!.check(s as never)[0]?.fix;
        if (version !== MODERN) assert.match(String(fix), /-32600/);
        assert.equal(
          run('reserved-code', subject({ version, status, method: 'ping', response: errorMsg(-32150, 'x') }))?.message.error?.code,
          -32600,
        );
      }
      assert.equal(
        run('legacy-range-code', subject({ version, status: 500, response: errorMsg(-32000, 'x') }))?.message.error?.code,
        -32603,
      );
    }
  });

  test("an id-less transport rejection keeps its id as the server sent it; error-id-null's own cases get the request's id", () => {
    const apply = (s: ExchangeSubject, rule: string) =>
      rewriterFor(rule).apply(undefined, { subject: s, finding: finding(rule), marker: MARKER });
    for (const version of ['2025-03-26', '2025-06-18', '2025-11-25', MODERN]) {
      for (const status of [400, 406, 415, 500]) {
        const nullId = subject({ version, status, unmatched: [errorMsg(-32000, 'Bad Request', undefined, null)] });
        assert.deepEqual(
          apply(nullId, 'legacy-range-code')?.message,
          errorMsg(status < 500 ? -32600 : -32603, 'Bad Request', { originalCode: -32000 }, null),
          `${version} ${status}`,
        );
        const absent = subject({ version, status, unmatched: [{ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request' } }] });
        const out = apply(absent, 'legacy-range-code')?.message;
        assert.ok(out && !('id' in out), `${version} ${status}: ${JSON.stringify(out)}`);
        assert.equal(CODE_RULES.find((r) => r.id === 'error-id-null')!.check(nullId as never).length, 0, 'no finding asks for the id');
      }
    }
    // 2024-11-05 requires the id on a rejection too (error-id-null fires): it is filled in.
    const v1 = subject({ version: '2024-11-05', status: 400, unmatched: [errorMsg(-32000, 'Bad Request', undefined, null)] });
    assert.equal(CODE_RULES.find((r) => r.id === 'error-id-null')!.check(v1 as never).length, 1);
    assert.deepEqual(apply(v1, 'legacy-range-code')?.message, errorMsg(-32600, 'Bad Request', { originalCode: -32000 }));
  });

  test('an unknown method gets -32601, with HTTP 404 under 2026-07-28 on a JSON response', () => {
    const legacy = subject({ version: '2025-06-18', method: 'tasks/get', response: errorMsg(-32000, 'nope') });
    assert.deepEqual(run('legacy-range-code', legacy), { message: errorMsg(-32601, 'nope', { originalCode: -32000 }) });
    const modern = subject({ method: 'ping', response: errorMsg(-32150, 'nope') });
    assert.deepEqual(run('reserved-code', modern), { message: errorMsg(-32601, 'nope', { originalCode: -32150 }), status: 404 });
    const sse = subject({ method: 'ping', transport: 'sse', response: errorMsg(-32150, 'nope') });
    assert.deepEqual(run('reserved-code', sse), { message: errorMsg(-32601, 'nope', { originalCode: -32150 }) });
    // The server did not declare tools: a tools/call is an unknown method.
    const undeclared = subject({
      version: '2025-03-26',
      session: { serverCapabilities: { prompts: {} } },
      response: errorMsg(-32010, 'no tools'),
    });
    assert.equal(run('legacy-range-code', undeclared)?.message.error?.code, -32601);
  });

  test('reserved-code: a spec-owned code the version does not define; -32042 and defined codes are left', () => {
    assert.equal(
      run('reserved-code', subject({ version: '2025-06-18', response: errorMsg(-32020, 'header') }))?.message.error?.code,
      -32603,
    );
    assert.equal(run('reserved-code', subject({ response: errorMsg(-32050, 'x') }))?.message.error?.code, -32603);
    assert.equal(run('reserved-code', subject({ response: errorMsg(-32020, 'header') })), undefined);
    assert.equal(run('reserved-code', subject({ version: '2025-06-18', response: errorMsg(-32042, 'url') })), undefined);
    assert.equal(run('reserved-code', subject({ response: errorMsg(-32602, 'x') })), undefined);
    assert.equal(run('legacy-range-code', subject({ version: '2025-06-18', response: errorMsg(-32002, 'x') })), undefined);
    assert.equal(run('legacy-range-code', subject({ response: errorMsg(-32603, 'x') })), undefined);
  });

  test('retired-code: -32002 → -32602 under 2026-07-28, -32042 → -32603 outside 2025-11-25', () => {
    const retired = subject({ response: errorMsg(-32002, 'Resource not found', { uri: 'file:///x' }) });
    assert.deepEqual(run('retired-code', retired), {
      message: errorMsg(-32602, 'Resource not found', { uri: 'file:///x', originalCode: -32002 }),
    });
    for (const version of ['2024-11-05', '2025-03-26', '2025-06-18', MODERN]) {
      const url = subject({ version, response: errorMsg(-32042, 'URL elicitation required', { elicitations: [] }) });
      assert.deepEqual(run('retired-code', url)?.message.error, {
        code: -32603,
        message: 'URL elicitation required',
        data: { elicitations: [], originalCode: -32042 },
      });
    }
    assert.equal(run('retired-code', subject({ version: '2025-11-25', response: errorMsg(-32042, 'x', { elicitations: [] }) })), undefined);
    assert.equal(run('retired-code', subject({ version: '2025-06-18', response: errorMsg(-32002, 'x') })), undefined);
    assert.equal(
      run('retired-code', subject({ method: 'resources/read', params: { uri: 'file:///x' }, response: errorMsg(-32002, 'x') })),
      undefined,
    );
  });

  test('resource-not-found-code: -32602 under 2026-07-28, -32002 before', () => {
    const read = { method: 'resources/read', params: { uri: 'file:///missing' } };
    assert.deepEqual(
      run('resource-not-found-code', subject({ ...read, response: errorMsg(-32002, 'Resource not found', { uri: 'file:///missing' }) })),
      {
        message: errorMsg(-32602, 'Resource not found', { uri: 'file:///missing', originalCode: -32002 }),
      },
    );
    assert.deepEqual(run('resource-not-found-code', subject({ ...read, response: errorMsg(-32603, 'file not found') })), {
      message: errorMsg(-32602, 'file not found', { originalCode: -32603 }),
    });
    for (const version of LEGACY_VERSIONS) {
      const s = subject({ ...read, version, response: errorMsg(-32603, 'Resource not found: file:///missing') });
      assert.deepEqual(run('resource-not-found-code', s), {
        message: errorMsg(-32002, 'Resource not found: file:///missing', { originalCode: -32603 }),
      });
      assert.equal(run('resource-not-found-code', subject({ ...read, version, response: errorMsg(-32002, 'x') })), undefined);
      assert.equal(run('resource-not-found-code', subject({ ...read, version, response: errorMsg(-32602, 'x') })), undefined);
    }
    assert.equal(run('resource-not-found-code', subject({ ...read, response: errorMsg(-32602, 'x') })), undefined);
    assert.equal(run('resource-not-found-code', subject({ ...read, response: errorMsg(-32601, 'x') })), undefined);
    assert.equal(run('resource-not-found-code', subject({ response: errorMsg(-32002, 'x') })), undefined);
  });

  test('unknown-method-wrong-code: -32601 (and 404 under 2026-07-28 over JSON)', () => {
    for (const version of LEGACY_VERSIONS) {
      const s = subject({ version, method: 'foo/bar', response: errorMsg(-32603, 'Method foo/bar not implemented') });
      assert.deepEqual(run('unknown-method-wrong-code', s), {
        message: errorMsg(-32601, 'Method foo/bar not implemented', { originalCode: -32603 }),
      });
    }
    const modern = subject({ method: 'foo/bar', status: 200, response: errorMsg(-32602, 'unsupported method', { x: 1 }) });
    assert.deepEqual(run('unknown-method-wrong-code', modern), {
      message: errorMsg(-32601, 'unsupported method', { x: 1, originalCode: -32602 }),
      status: 404,
    });
    assert.deepEqual(run('unknown-method-wrong-code', subject({ method: 'foo/bar', status: 404, response: errorMsg(-32603, 'x') })), {
      message: errorMsg(-32601, 'x', { originalCode: -32603 }),
    });
    assert.equal(run('unknown-method-wrong-code', subject({ method: 'foo/bar', response: errorMsg(-32601, 'x') })), undefined);
    assert.equal(
      run('unknown-method-wrong-code', subject({ method: 'foo/bar', response: resultMsg({ resultType: 'complete' }) })),
      undefined,
    );
  });

  test('2026-07-28 status pairings: -32601 → 404; -32020/-32021/-32022 and the missing-_meta -32602 → 400', () => {
    const notFound = subject({ method: 'foo/bar', response: errorMsg(-32601, 'Method not found') });
    assert.deepEqual(run('unknown-method-status', notFound), { message: errorMsg(-32601, 'Method not found'), status: 404 });
    assert.equal(run('unknown-method-status', subject({ method: 'foo/bar', status: 404, response: errorMsg(-32601, 'x') })), undefined);
    assert.equal(
      run('unknown-method-status', subject({ method: 'foo/bar', transport: 'sse', response: errorMsg(-32601, 'x') })),
      undefined,
    );
    assert.equal(
      run('unknown-method-status', subject({ method: 'foo/bar', session: { era: 'legacy' }, response: errorMsg(-32601, 'x') })),
      undefined,
    );
    assert.equal(
      run('unknown-method-status', subject({ version: '2025-11-25', method: 'foo/bar', response: errorMsg(-32601, 'x') })),
      undefined,
    );
    const unsupported = errorMsg(-32022, 'Unsupported protocol version', { supported: [MODERN], requested: '2099-01-01' });
    assert.deepEqual(run('error-status-pairing', subject({ response: unsupported })), { message: unsupported, status: 400 });
    for (const code of [-32020, -32021])
      assert.equal(run('error-status-pairing', subject({ response: errorMsg(code, 'x', { requiredCapabilities: {} }) }))?.status, 400);
    assert.deepEqual(run('error-status-pairing', subject({ noMeta: true, response: errorMsg(-32602, 'missing _meta') })), {
      message: errorMsg(-32602, 'missing _meta'),
      status: 400,
    });
    assert.equal(run('error-status-pairing', subject({ response: errorMsg(-32602, 'bad argument') })), undefined);
    assert.equal(run('error-status-pairing', subject({ status: 400, response: unsupported })), undefined);
    assert.equal(run('error-status-pairing', subject({ version: '2025-06-18', response: unsupported })), undefined);
  });

  for (const version of ALL_VERSIONS) {
    test(`${version}: error-shape: a non-integer code → -32603, a non-string message → its JSON text`, () => {
      assert.deepEqual(run('error-shape', subject({ version, response: errorMsg('-32602', 'bad') })), {
        message: errorMsg(-32603, 'bad', { originalCode: '-32602' }),
      });
      assert.deepEqual(run('error-shape', subject({ version, response: errorMsg(1.5, 'bad', { a: 1 }) })), {
        message: errorMsg(-32603, 'bad', { a: 1, originalCode: 1.5 }),
      });
      assert.deepEqual(run('error-shape', subject({ version, response: errorMsg(-32000, { why: 'x' }) })), {
        message: errorMsg(-32000, '{"why":"x"}'),
      });
      assert.deepEqual(run('error-shape', subject({ version, response: errorMsg(-32602, null) })), { message: errorMsg(-32602, 'null') });
      const missing = subject({ version, response: { jsonrpc: '2.0', id: 7, error: { code: null } } });
      assert.deepEqual(run('error-shape', missing), { message: errorMsg(-32603, 'Internal error', { originalCode: null }) });
      assert.equal(run('error-shape', subject({ version, response: errorMsg(-32603, 'fine') })), undefined);
    });

    test(`${version}: error-id-null: the id-less error the request got, with the request's id`, () => {
      const s = subject({ version, id: 'req-9', unmatched: [errorMsg(-32603, 'boom', undefined, null)] });
      assert.deepEqual(run('error-id-null', s, { message: undefined }), { message: errorMsg(-32603, 'boom', undefined, 'req-9') });
      const absent = subject({ version, unmatched: [{ jsonrpc: '2.0', error: { code: -32603, message: 'boom', data: { a: 1 } } }] });
      assert.deepEqual(run('error-id-null', absent, { message: undefined }), { message: errorMsg(-32603, 'boom', { a: 1 }) });
      assert.equal(run('error-id-null', subject({ version }), { message: undefined }), undefined);
      assert.equal(run('error-id-null', subject({ version, response: errorMsg(-32603, 'x') })), undefined);
      assert.deepEqual(run('error-id-null', s, { message: errorMsg(-32603, 'boom', undefined, null) as ResponseMessage }), {
        message: errorMsg(-32603, 'boom', undefined, 'req-9'),
      });
    });
  }
});

describe("no usable response → a JSON-RPC error with the request's id", () => {
  const BODY_RULES: Array<[string, 'html' | 'empty' | 'not-json' | 'not-utf8' | 'not-jsonrpc' | undefined, string]> = [
    ['html-body', 'html', 'The MCP server answered with an HTML page instead of a JSON-RPC response'],
    ['empty-body', 'empty', 'The MCP server answered with an empty body instead of a JSON-RPC response'],
    ['non-json-body', 'not-json', 'The MCP server answered with a body that is not JSON'],
    ['non-utf8-body', 'not-utf8', 'The MCP server answered with a body that is not valid UTF-8'],
    ['not-jsonrpc-body', 'not-jsonrpc', 'The MCP server answered with JSON that is not a JSON-RPC response'],
    ['no-response', undefined, 'Upstream MCP server closed the connection before responding'],
  ];
  for (const version of ALL_VERSIONS) {
    test(`${version}: -32603 with data { reason, upstreamStatus } on HTTP 200`, () => {
      for (const [rule, problem, text] of BODY_RULES) {
        const s = subject({
          version,
          id: 'r1',
          status: 502,
          contentType: 'text/html',
          ...(problem ? { bodyProblem: problem } : { proxyError: 'WARDEN_UPSTREAM_RESET' }),
        });
        const upstreamStatus = problem ? 502 : null;
        assert.deepEqual(
          run(rule, s, { message: undefined }),
          { message: errorMsg(-32603, text, { reason: rule, upstreamStatus }, 'r1'), status: 200 },
          rule,
        );
      }
    });
  }

  test('a tools/call of a tool a complete catalogue lacks gets the unknown-tool error', () => {
    const s = subject({ tool: 'nope', catalogue: ['echo'], status: 500, bodyProblem: 'html' });
    assert.deepEqual(run('html-body', s, { message: undefined }), {
      message: errorMsg(-32602, 'Unknown tool: nope', { reason: 'html-body', upstreamStatus: 500 }),
      status: 200,
    });
    // In the catalogue, or no complete catalogue: the generic error.
    assert.equal(
      run('html-body', subject({ tool: 'echo', catalogue: ['echo'], bodyProblem: 'html' }), { message: undefined })?.message.error?.code,
      -32603,
    );
    assert.equal(
      run('no-response', subject({ version: '2024-11-05', tool: 'nope', transport: 'sse' }), { message: undefined })?.message.error?.code,
      -32603,
    );
    const dropped = subject({ version: '2025-06-18', tool: 'nope', catalogue: ['echo'], transport: 'sse', status: 200 });
    assert.deepEqual(run('no-response', dropped, { message: undefined }), {
      message: errorMsg(-32602, 'Unknown tool: nope', { reason: 'no-response', upstreamStatus: 200 }),
      status: 200,
    });
  });

  test('JSON that is not JSON-RPC is replaced; an answer an earlier rewrite built is kept', () => {
    const s = subject({ bodyProblem: 'not-jsonrpc', response: { id: 7, result: 'x' } });
    assert.equal(
      run('not-jsonrpc-body', s, { message: { id: 7, result: 'x' } as unknown as ResponseMessage })?.message.error?.code,
      -32603,
    );
    assert.equal(
      run('html-body', subject({ bodyProblem: 'html' }), { message: errorMsg(-32602, 'Unknown tool: x') as ResponseMessage }),
      undefined,
    );
  });

  test('a 4xx the client must act on keeps its status, the body becomes JSON-RPC (403 challenge, 404 session expiry, 2026-07-28 400/404/405); a redirect is left alone', () => {
    for (const status of [400, 401, 403, 404, 405, 413, 429]) {
      const rewritten = run('html-body', subject({ status, bodyProblem: 'html' }), { message: undefined });
      assert.equal(rewritten?.status, status, String(status));
      assert.equal((rewritten!.message.error as { code: number }).code, -32603, String(status));
      assert.equal(
        run('empty-body', subject({ version: '2025-03-26', status, bodyProblem: 'empty' }), { message: undefined })?.status,
        status,
        String(status),
      );
    }
    assert.equal(run('html-body', subject({ status: 301, bodyProblem: 'html' }), { message: undefined }), undefined);
    assert.equal(run('html-body', subject({ status: 200, bodyProblem: 'html' }), { message: undefined })?.status, 200);
    assert.equal(run('html-body', subject({ status: 503, bodyProblem: 'html' }), { message: undefined })?.status, 200);
  });
});

describe('leaked internals → the marker', () => {
  const stack = LEAK_PATTERNS.filter((p) => p.rule === 'leaked-stack-trace');
  const noLeak = (value: unknown, rule: string) =>
    assert.deepEqual(
      findLeaks(JSON.stringify(value).replace(/\\n/g, '\n'), { patterns: LEAK_PATTERNS.filter((p) => p.rule === rule) }),
      [],
      JSON.stringify(value),
    );

  test('stack traces: frame lines dropped, the readable lines kept, one marker', () => {
    const cases: Array<[string, string]> = [
      [
        "TypeError: Cannot read properties of undefined (reading 'id')\n    at handler (/app/src/server.js:42:17)\n    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)",
        "TypeError: Cannot read properties of undefined (reading 'id')\n[redacted]",
      ],
      [
        'Traceback (most recent call last):\n  File "/srv/app/main.py", line 3, in <module>\n    foo()\nValueError: bad value',
        '[redacted]\nValueError: bad value',
      ],
      [
        'Exception in thread "main" java.lang.IllegalStateException: boom\n\tat com.acme.Main.run(Main.java:10)\nCaused by: java.io.IOException: disk full\n\tat com.acme.Disk.write(Disk.java:3)\n\t... 2 more',
        'java.lang.IllegalStateException: boom\n[redacted]',
      ],
      ['Error: boom at f (/app/x.js:1:2)', 'Error: boom [redacted]'],
      [
        'panic: runtime error: index out of range [5] with length 3\n\ngoroutine 1 [running]:\nmain.main()\n\t/app/main.go:8 +0x1d\nexit status 2',
        'runtime error: index out of range [5] with length 3\n\n[redacted]\nexit status 2',
      ],
      [
        'System.InvalidOperationException: Sequence contains no elements\r\n   at System.Linq.Enumerable.First()\r\n   at Acme.Orders.Get(Int32 id) in /src/Acme/Orders.cs:line 42',
        'Sequence contains no elements\r\n[redacted]',
      ],
      ['System.IO.IOException: disk full', '[redacted]: disk full'],
      ['no trace here', 'no trace here'],
    ];
    for (const [input, want] of cases) assert.equal(redactStack(input, stack, [], MARKER), want, input);
  });

  test('overlapping and touching spans are merged before replacing', () => {
    const leak = (index: number, length: number) => ({ rule: 'leaked-path' as const, pattern: 'x', label: 'x', match: '', index, length });
    assert.equal(replaceSpans('abcdefghij', [leak(1, 3), leak(2, 4), leak(6, 1), leak(8, 1)], '#'), 'a#h#j');
  });

  for (const version of ALL_VERSIONS) {
    test(`${version}: error.message, every string of error.data, an isError result's text`, () => {
      const trace = "TypeError: Cannot read properties of undefined (reading 'id')\n    at handler (/app/src/server.js:42:17)";
      const err = subject({ version, response: errorMsg(-32603, trace, { stack: trace, nested: [{ where: trace }, 3] }) });
      const redacted = "TypeError: Cannot read properties of undefined (reading 'id')\n[redacted]";
      assert.deepEqual(run('leaked-stack-trace', err), {
        message: errorMsg(-32603, redacted, { stack: redacted, nested: [{ where: redacted }, 3] }),
      });

      const path = subject({
        version,
        response: errorMsg(-32603, 'Cannot open /home/alice/project/secret.txt: permission denied', '/var/lib/app/data.db'),
      });
      assert.deepEqual(run('leaked-path', path), { message: errorMsg(-32603, 'Cannot open [redacted]: permission denied', '[redacted]') });

      const result = subject({
        version,
        response: resultMsg(toolResult('connect ECONNREFUSED 10.0.3.7:5432', { isError: true }, version)),
      });
      assert.deepEqual(run('leaked-private-address', result), {
        message: resultMsg(toolResult('connect ECONNREFUSED [redacted]', { isError: true }, version)),
      });

      const host = subject({
        version,
        response: errorMsg(-32603, 'query failed: postgres://app:pw@db.prod.internal:5432/orders timed out'),
      });
      assert.deepEqual(run('leaked-internal-host', host, { marker: '<hidden>' }), {
        message: errorMsg(-32603, 'query failed: <hidden> timed out'),
      });
    });
  }

  test("only the finding's rule is replaced; echoes of what the client sent and non-error results are left", () => {
    const mixed = subject({ response: errorMsg(-32603, 'cannot reach 10.0.0.5 for /etc/app/config.yml') });
    assert.equal(run('leaked-path', mixed)?.message.error?.message, 'cannot reach 10.0.0.5 for [redacted]');
    assert.equal(run('leaked-private-address', mixed)?.message.error?.message, 'cannot reach [redacted] for /etc/app/config.yml');
    const echo = subject({
      params: { name: 'read', arguments: { path: '/home/alice/notes.txt' } },
      tool: 'read',
      response: errorMsg(-32603, 'cannot read /home/alice/notes.txt'),
    });
    assert.equal(run('leaked-path', echo), undefined);
    const ok = subject({ response: resultMsg(toolResult('wrote /home/alice/out.txt')) });
    assert.equal(run('leaked-path', ok), undefined);
    assert.equal(run('leaked-path', subject({ response: errorMsg(-32603, 'nothing secret') })), undefined);
    assert.equal(run('leaked-path', subject({ response: errorMsg(-32603, '/home/alice/x') }), { message: undefined }), undefined);
    noLeak(run('leaked-path', mixed)?.message, 'leaked-path');
  });
});

describe('chains (one rewriter after another on the same message, in catalogue order)', () => {
  test('an unknown tool whose isError text leaks a path: one unknown-tool error, no leak', () => {
    for (const version of ALL_VERSIONS) {
      const s = subject({
        version,
        tool: 'nope',
        response: resultMsg(toolResult('Tool nope not found in /srv/app/tools/registry.js', { isError: true }, version)),
      });
      const out = chain(s, ['unknown-tool-as-iserror', 'silent-success', 'leaked-path']);
      assert.deepEqual(out.message, errorMsg(-32602, 'Unknown tool: nope', { serverMessage: 'Tool nope not found in [redacted]' }));
      assert.deepEqual(out.applied, ['unknown-tool-as-iserror', 'leaked-path']);
      assert.equal(out.status, 200);
    }
  });

  test('a leaky error with a legacy-range code: code fixed and text redacted', () => {
    for (const version of ALL_VERSIONS) {
      const trace =
        "Error: ENOENT: no such file or directory, open '/var/app/cache/x.json'\n    at Object.openSync (node:fs:596:3)\n    at load (/app/dist/cache.js:10:5)";
      const s = subject({
        version,
        response: errorMsg(-32000, 'ENOENT at /var/app/cache/x.json', { stack: trace, host: 'cache.internal:6379' }),
      });
      const out = chain(s, ['legacy-range-code', 'leaked-stack-trace', 'leaked-path', 'leaked-internal-host']);
      assert.deepEqual(
        out.message,
        errorMsg(-32603, 'ENOENT at [redacted]', {
          stack: "Error: ENOENT: no such file or directory, open '[redacted]'\n[redacted]",
          host: '[redacted]',
          originalCode: -32000,
        }),
      );
      assert.deepEqual(out.applied, ['legacy-range-code', 'leaked-stack-trace', 'leaked-path', 'leaked-internal-host']);
    }
  });

  test('the findings these chains assume are what the rules report on the same subjects', () => {
    const rules = [...TOOL_RULES, ...CODE_RULES, ...BODY_RULES, ...LEAK_RULES];
    const fired = (s: ExchangeSubject): string[] =>
      rules
        .filter((r): r is ExchangeRule => r.subject === 'exchange')
        .filter((r) => r.versions.includes(s.version ?? '') && r.check(s).length > 0)
        .map((r) => r.id);
    const trace = 'Error: x\n    at Object.openSync (node:fs:596:3)\n    at load (/app/dist/cache.js:10:5)';
    const cases: Array<[ExchangeSubject, string[]]> = [
      [
        subject({
          version: '2025-06-18',
          tool: 'nope',
          response: resultMsg(toolResult('Tool nope not found in /srv/app/tools/registry.js', { isError: true }, '2025-06-18')),
        }),
        ['unknown-tool-as-iserror', 'leaked-path'],
      ],
      [
        subject({
          version: '2025-06-18',
          response: errorMsg(-32000, 'ENOENT at /var/app/cache/x.json', { stack: trace, host: 'cache.internal:6379' }),
        }),
        ['legacy-range-code', 'leaked-stack-trace', 'leaked-path', 'leaked-internal-host'],
      ],
      [
        subject({ version: '2025-06-18', unmatched: [errorMsg(-32000, 'Bad Request', undefined, null)] }),
        ['legacy-range-code', 'error-id-null'],
      ],
      [subject({ method: 'ping', response: errorMsg(-32050, 'no such method') }), ['reserved-code']],
      [subject({ tool: 'nope', catalogue: ['echo'], status: 500, bodyProblem: 'html' }), ['html-body']],
      [
        subject({
          version: '2025-11-25',
          tool: 'nope',
          response: errorMsg(-32603, 'Tool nope not found\n    at lookup (/app/tools.js:3:9)'),
        }),
        ['unknown-tool-wrong-code', 'leaked-stack-trace', 'leaked-path'],
      ],
      [subject({ version: '2025-11-25', response: errorMsg(-32000, { text: 'busy' }) }), ['legacy-range-code', 'error-shape']],
    ];
    for (const [s, want] of cases) assert.deepEqual(fired(s), want);
  });

  test("an id-less error with a legacy-range code: built from the unmatched error, with the request's id, once", () => {
    for (const version of ALL_VERSIONS) {
      const s = subject({ version, unmatched: [errorMsg(-32000, 'Bad Request', undefined, null)] });
      const out = chain(s, ['legacy-range-code', 'error-id-null']);
      assert.deepEqual(out.message, errorMsg(-32603, 'Bad Request', { originalCode: -32000 }));
      assert.deepEqual(out.applied, ['legacy-range-code']);
    }
  });

  test('2026-07-28: a silent failure without resultType, a reserved code for an unknown method with its 404', () => {
    // Every rewritten message conforms: silent-success alone already gives the result its resultType.
    const silent = subject({ response: resultMsg({ content: [{ type: 'text', text: 'Error: quota exceeded' }] }) });
    assert.deepEqual(chain(silent, ['silent-success', 'result-type-missing']), {
      message: resultMsg({ content: [{ type: 'text', text: 'Error: quota exceeded' }], isError: true, resultType: 'complete' }),
      status: undefined,
      applied: ['silent-success'],
    });
    assert.deepEqual(
      chain(silent, ['result-type-missing']).message,
      resultMsg({ content: [{ type: 'text', text: 'Error: quota exceeded' }], resultType: 'complete' }),
    );
    const unknown = subject({ method: 'ping', response: errorMsg(-32050, 'no such method') });
    // (unknown-method-status does not fire here: it judges the server's code, which was not -32601.)
    const out = chain(unknown, ['reserved-code', 'unknown-method-wrong-code']);
    assert.deepEqual(out, {
      message: errorMsg(-32601, 'no such method', { originalCode: -32050 }),
      status: 404,
      applied: ['reserved-code'],
    });
  });

  test("a rewrite never sends out another defect of the server's: a code fix on an error whose message is not a string", () => {
    for (const version of ALL_VERSIONS) {
      const s = subject({ version, response: errorMsg(-32000, { text: 'busy' }) });
      const out = chain(s, ['legacy-range-code', 'error-shape']);
      assert.deepEqual(out, {
        message: errorMsg(-32603, '{"text":"busy"}', { originalCode: -32000 }),
        status: undefined,
        applied: ['legacy-range-code'],
      });
    }
  });

  test('a wrong-code unknown tool whose message leaks a stack trace, after error-shape', () => {
    const s = subject({
      version: '2025-11-25',
      tool: 'nope',
      response: errorMsg(-32603, 'Tool nope not found\n    at lookup (/app/tools.js:3:9)'),
    });
    const out = chain(s, ['unknown-tool-wrong-code', 'error-shape', 'leaked-stack-trace', 'leaked-path']);
    assert.deepEqual(
      out.message,
      errorMsg(-32602, 'Unknown tool: nope', { serverMessage: 'Tool nope not found\n[redacted]', originalCode: -32603 }),
    );
  });
});

describe('never throws', () => {
  const messages: unknown[] = [
    undefined,
    {},
    { jsonrpc: '2.0' },
    { jsonrpc: '2.0', id: 7, error: null },
    { jsonrpc: '2.0', id: 7, error: 'boom' },
    { jsonrpc: '2.0', id: 7, result: null },
    { jsonrpc: '2.0', id: 7, result: [] },
    { jsonrpc: '2.0', id: 7, result: { content: 'x', isError: 'true' } },
    { jsonrpc: '2.0', id: 7, result: { content: [null, 1, { type: 'text', text: 5 }], isError: true } },
    { jsonrpc: '2.0', id: 7, error: { code: {}, message: [], data: { deep: 'x' } } },
    { jsonrpc: '2.0', id: 7, result: 1, error: { code: 1, message: 'x' } },
    {
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32000,
        message: 'x',
        data: (() => {
          let d: unknown = '/home/a/b';
          for (let i = 0; i < 200; i++) d = [d];
          return d;
        })(),
      },
    },
  ];
  const cyclic: Record<string, unknown> = { jsonrpc: '2.0', id: 7, error: { code: -32000, message: 'x' } };
  (cyclic.error as Record<string, unknown>).data = cyclic;
  messages.push(cyclic, {
    jsonrpc: '2.0',
    id: 7,
    get error() {
      throw new Error('getter');
    },
  });
  const subjects: ExchangeSubject[] = [
    subject(),
    subject({ version: undefined, method: 'foo/bar' }),
    subject({ version: 'bogus', params: { name: 5 } as Record<string, unknown> }),
    subject({
      version: '2024-11-05',
      tool: 'nope',
      catalogue: [],
      unmatched: [{ jsonrpc: '2.0', id: null, error: 'x' }, 42, { id: null }],
    }),
    { ...subject({ method: 'resources/read' }), request: { ...subject().request, params: null, tool: undefined } },
    subject({ from: 'server', method: 'sampling/createMessage' }),
  ];

  test('every rewriter, every rule it handles, odd messages and subjects', () => {
    for (const rewriter of REWRITERS) {
      for (const rule of rewriter.rules) {
        for (const s of subjects) {
          for (const m of messages) {
            let out: Rewritten | undefined;
            assert.doesNotThrow(
              () => {
                out = rewriter.apply(m as ResponseMessage | undefined, { subject: s, finding: finding(rule), marker: MARKER });
              },
              `${rule} on ${String(JSON.stringify(s.version))}`,
            );
            if (out) assert.equal(out.message.jsonrpc, '2.0', rule);
          }
        }
      }
    }
    // A finding of a rule the rewriter does not handle: nothing.
    for (const rewriter of REWRITERS)
      assert.equal(
        rewriter.apply(errorMsg(-32000, '/home/a/b') as ResponseMessage, {
          subject: subject(),
          finding: finding('tools-list-shape'),
          marker: MARKER,
        }),
        undefined,
      );
  });
});

describe('schema check', () => {
  test('rejects invalid responses, per version', () => {
    for (const version of SCHEMA_VERSIONS) {
      assert.throws(
        () => assertValidResponse({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'x' } }, version),
        /invalid/,
        version,
      );
      assert.throws(() => assertValidResponse({ jsonrpc: '2.0', id: 1, error: { code: 1.5, message: 'x' } }, version), /invalid/, version);
      assert.throws(() => assertValidResponse({ jsonrpc: '2.0', id: 1, error: { code: -32603 } }, version), /invalid/, version);
      assert.throws(() => assertValidResponse({ jsonrpc: '1.0', id: 1, result: {} }, version), /invalid/, version);
      assert.throws(
        () => assertValidResponse({ jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'x' } }, version),
        /exactly one/,
        version,
      );
      assert.throws(
        () =>
          assertValidResponse(
            { jsonrpc: '2.0', id: 1, result: { content: [], isError: 'true', resultType: 'complete' } },
            version,
            'tools/call',
          ),
        /CallToolResult is invalid/,
        version,
      );
      assertValidResponse(
        { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'ok' }], isError: true, resultType: 'complete' } },
        version,
        'tools/call',
      );
      assertValidResponse({ jsonrpc: '2.0', id: 'a', error: { code: -32602, message: 'x', data: null } }, version);
    }
  });

  test('the error id is required through 2025-06-18, optional after; 2026-07-28 results need a known resultType', () => {
    const idless = { jsonrpc: '2.0', error: { code: -32600, message: 'x' } };
    for (const version of ['2024-11-05', '2025-03-26', '2025-06-18']) assert.throws(() => assertValidResponse(idless, version), /invalid/);
    for (const version of ['2025-11-25', MODERN]) assertValidResponse(idless, version);
    assert.throws(() => assertValidResponse({ jsonrpc: '2.0', id: 1, result: { content: [] } }, MODERN, 'tools/call'), /resultType/);
    assert.throws(() => assertValidResponse({ jsonrpc: '2.0', id: 1, result: {} }, MODERN), /resultType/);
    assert.throws(() => assertValidResponse({ jsonrpc: '2.0', id: 1, result: { resultType: 'later' } }, MODERN), /resultType/);
    assertValidResponse({ jsonrpc: '2.0', id: 1, result: {} }, '2025-06-18');
  });
});
