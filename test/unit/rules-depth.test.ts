// Depth, width and text bounds (issue 10 item 6, issue 16 "no silent pass"), pure: the shared
// walker (src/rules/walk.ts) and its users. No rule throws on a value nested 100,000 levels deep
// wherever it sits (a rule that throws loses its finding); the leak rules read a leak placed past
// the old walk (33 levels deep, after 2,000 values, after 16 KiB of text); what no bound lets them
// read gets unreadable-request / unreadable-response; ordinary deep-ish content gets neither.
// The copy and the encoder of rewritten messages work at any depth.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJsonText } from '../../src/codec/json-body.ts';
import { jsonText } from '../../src/codec/json-text.ts';
import { RuleEngine } from '../../src/rules/engine.ts';
import { RULES } from '../../src/rules/index.ts';
import type { PostSubject, Subject } from '../../src/rules/types.ts';
import { boundedPointer, copyJson, nesting, WALK_BOUNDS, walkStrings, budget } from '../../src/rules/walk.ts';
import { encodeBody } from '../../src/rewrite/encode.ts';
import { copyOf } from '../../src/rewrite/message.ts';
import { errorMsg, MODERN, modernMeta, resultMsg, session, subject } from '../helpers/subject.ts';

const DEEP = 100_000;
const TRACE = 'Error: boom\n    at handler (/srv/app/dist/tools.js:42:17)';

/** `leaf` under `depth` levels of `{ c: ... }` (or `[...]`). */
function nest(depth: number, leaf: unknown, array = false): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = array ? [v] : { c: v };
  return v;
}

function evaluate(s: Subject, party?: 'client' | 'server') {
  const errors: string[] = [];
  const engine = new RuleEngine(RULES, (rule, err) => errors.push(`${rule}: ${(err as Error)?.message ?? String(err)}`));
  const findings = engine.evaluate(s, party);
  return { findings, errors, rules: findings.map((f) => f.rule) };
}

/** A POST whose request and answer are both `body` (decoded once: rules do not change what they read). */
function post(body: string, version: string | undefined = MODERN): PostSubject {
  const decoded = decodeJsonText(body);
  return {
    kind: 'post',
    version,
    requestHeaders: {},
    request: decoded,
    status: 200,
    contentType: 'application/json',
    responseHeaders: {},
    response: decoded,
    responseBytes: body.length,
    session: session(),
  };
}

describe('no rule throws on values nested 100,000 levels deep', () => {
  for (const array of [false, true]) {
    const deep = nest(DEEP, 'x', array);
    const shape = array ? 'arrays' : 'objects';
    const responses: Array<[string, unknown]> = [
      ['error.data', errorMsg(-32603, 'Internal error', deep)],
      ['error.message', errorMsg(-32603, deep)],
      ['error.code', errorMsg(deep, 'boom')],
      ['error', { jsonrpc: '2.0', id: 7, error: deep }],
      ['result', resultMsg(deep)],
      ['result.content', resultMsg({ content: deep, isError: true })],
      ['result.content[0]', resultMsg({ content: [deep], isError: true })],
      ['result.content[0].text', resultMsg({ content: [{ type: 'text', text: deep }], isError: true })],
      ['result.isError', resultMsg({ content: [], isError: deep })],
      ['result._meta', resultMsg({ content: [{ type: 'text', text: 'ok' }], _meta: deep })],
      ['result.tools', resultMsg({ tools: deep })],
      ['result.resultType', resultMsg({ resultType: deep, content: [] })],
      ['id', { jsonrpc: '2.0', id: deep, result: {} }],
      ['jsonrpc', { jsonrpc: deep, id: 7, result: {} }],
    ];
    for (const [where, response] of responses) {
      test(`${where} (${shape})`, () => {
        for (const version of [MODERN, '2025-06-18', undefined]) {
          for (const method of ['tools/call', 'tools/list', 'resources/read', 'initialize', 'ping', 'nope/nope']) {
            const s = subject({ version, method, response, unmatched: [response], catalogue: ['echo'] });
            const { errors } = evaluate(s, 'server');
            assert.deepEqual(errors, [], `${method} ${version}`);
          }
        }
      });
    }
    const requests: Array<[string, Record<string, unknown>]> = [
      ['params._meta', { name: 'echo', arguments: {}, _meta: { ...modernMeta(), deep } }],
      ['params._meta itself', { name: 'echo', arguments: {}, _meta: deep }],
      ['params.arguments', { name: 'echo', arguments: deep }],
      ['params.name', { name: deep, arguments: {} }],
      ['params.task', { name: 'echo', arguments: {}, task: deep }],
    ];
    for (const [where, params] of requests) {
      test(`request ${where} (${shape})`, () => {
        for (const version of [MODERN, '2025-06-18']) {
          const s = subject({ version, params, response: errorMsg(-32603, TRACE) });
          assert.deepEqual(evaluate(s, 'client').errors, []);
          assert.deepEqual(evaluate(s, 'server').errors, []);
        }
      });
    }
    test(`a client POST body (${shape})`, () => {
      const open = array ? '[' : '{"c":';
      const close = array ? ']' : '}';
      const bodies = [
        `${open.repeat(DEEP)}1${close.repeat(DEEP)}`,
        `[${open.repeat(DEEP)}1${close.repeat(DEEP)}]`,
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":${open.repeat(DEEP)}1${close.repeat(DEEP)}}}`,
        `{"jsonrpc":"2.0","method":"notifications/x","params":${open.repeat(DEEP)}1${close.repeat(DEEP)}}`,
        `{"jsonrpc":${open.repeat(DEEP)}1${close.repeat(DEEP)},"id":1,"method":"x"}`,
      ];
      for (const body of bodies) {
        const posted = post(body);
        for (const party of ['client', 'server'] as const) {
          const { errors, rules } = evaluate(posted, party);
          assert.deepEqual(errors, [], body.slice(0, 40));
          if (party === 'client') assert.ok(rules.includes('unreadable-request'), `${body.slice(0, 40)}: ${rules}`);
        }
      }
    });
  }
});

describe('the leak rules read past the old walk; what no bound lets them read is unreadable-response', () => {
  const leakRules = (response: unknown) => evaluate(subject({ response }), 'server').rules;

  test('a stack trace 33 levels deep in error.data', () => {
    const rules = leakRules(errorMsg(-32603, 'Internal error', nest(33, TRACE)));
    assert.ok(rules.includes('leaked-stack-trace'), String(rules));
    assert.ok(!rules.includes('unreadable-response'));
  });

  test('a stack trace 120 levels deep (inside the depth bound) is found; one past it is unreadable', () => {
    assert.ok(leakRules(errorMsg(-32603, 'x', nest(WALK_BOUNDS.depth - 3, TRACE))).includes('leaked-stack-trace'));
    const past = leakRules(errorMsg(-32603, 'x', nest(WALK_BOUNDS.depth, TRACE)));
    assert.ok(!past.includes('leaked-stack-trace') && past.includes('unreadable-response'), String(past));
  });

  test('a stack trace after 2,000 other values', () => {
    const rules = leakRules(errorMsg(-32603, 'Internal error', { filler: Array.from({ length: 2000 }, (_, i) => i), trace: TRACE }));
    assert.ok(rules.includes('leaked-stack-trace'), String(rules));
    assert.ok(!rules.includes('unreadable-response'));
  });

  test('a stack trace after 16 KiB of text, in the message or the data', () => {
    const pad = 'x'.repeat(16 * 1024 + 10);
    for (const response of [
      errorMsg(-32603, pad, { trace: TRACE }),
      errorMsg(-32603, 'x', { pad, trace: TRACE }),
      resultMsg({
        content: [
          { type: 'text', text: pad },
          { type: 'text', text: TRACE },
        ],
        isError: true,
      }),
    ]) {
      const rules = leakRules(response);
      assert.ok(rules.includes('leaked-stack-trace'), String(rules));
      assert.ok(!rules.includes('unreadable-response'));
    }
  });

  test('past the node bound, past the text bound: unreadable-response, with where the reading stopped', () => {
    const cases: Array<[unknown, RegExp, string]> = [
      [
        errorMsg(-32603, 'x', { filler: new Array(WALK_BOUNDS.nodes).fill(0), trace: TRACE }),
        /more than 100,000 values/,
        '/response/error/data/filler/',
      ],
      [errorMsg(-32603, 'x'.repeat(WALK_BOUNDS.text), { trace: TRACE }), /more than 1 MiB of error text/, '/response/error/data/trace'],
      [errorMsg(-32603, 'x'.repeat(WALK_BOUNDS.text + 1)), /more than 1 MiB of error text/, '/response/error/message'],
      [
        resultMsg({
          content: [
            { type: 'text', text: 'x'.repeat(WALK_BOUNDS.text) },
            { type: 'text', text: TRACE },
          ],
          isError: true,
        }),
        /1 MiB/,
        '/response/result/content/1/text',
      ],
      [
        resultMsg({ content: new Array(WALK_BOUNDS.nodes + 1).fill({ type: 'image' }), isError: true }),
        /100,000 values/,
        '/response/result/content/',
      ],
    ];
    for (const [response, message, at] of cases) {
      const { findings, errors } = evaluate(subject({ response }), 'server');
      assert.deepEqual(errors, []);
      const f = findings.find((x) => x.rule === 'unreadable-response');
      assert.ok(f, JSON.stringify(findings.map((x) => x.rule)));
      assert.match(f.message, message);
      assert.ok(f.pointer.startsWith(at), f.pointer);
      assert.equal(f.severity, 'warning');
    }
  });

  test('a response nested deeper than the bound anywhere (a result _meta 3,000 deep) is unreadable-response, pointing into it', () => {
    const { findings } = evaluate(
      subject({ response: resultMsg({ content: [{ type: 'text', text: 'ok' }], _meta: nest(3000, 1) }) }),
      'server',
    );
    const f = findings.find((x) => x.rule === 'unreadable-response');
    assert.ok(f);
    assert.ok(f.pointer.startsWith('/response/result/_meta/c/c/'), f.pointer);
    assert.ok(f.pointer.length <= 240);
  });

  test('a request with _meta 3,000 deep is unreadable-request', () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'echo', arguments: {}, _meta: { ...modernMeta(), x: 1 } },
    }).replace('"x":1', `"x":${'{"c":'.repeat(3000)}1${'}'.repeat(3000)}`);
    const { findings } = evaluate(post(body), 'client');
    const f = findings.find((x) => x.rule === 'unreadable-request');
    assert.ok(f);
    assert.ok(f.pointer.startsWith('/request/params/_meta/x/c/'), f.pointer);
  });
});

describe('ordinary deep-ish content is read whole and gets no unreadable finding', () => {
  /** A tree of `depth` levels and about `nodes` values, with strings. */
  function tree(depth: number, nodes: number): unknown {
    const spine = nest(depth - 1, { leaf: 'value at the bottom' });
    const wide = Array.from({ length: nodes }, (_, i) => (i % 3 === 0 ? `item ${i}` : i % 3 === 1 ? i : { k: `v${i}` }));
    return { spine, wide };
  }
  const content = tree(20, 5000);

  test('depth 20 and 5,000 values in a result, an error, an isError result and a request', () => {
    const responses = [
      resultMsg({ content: [{ type: 'text', text: 'ok' }], structuredContent: content, resultType: 'complete' }),
      errorMsg(-32602, 'Invalid params', content),
      resultMsg({ content: [{ type: 'text', text: 'failed' }], isError: true, _meta: content, resultType: 'complete' }),
    ];
    for (const response of responses) {
      const { rules, errors } = evaluate(
        subject({ response, params: { name: 'echo', arguments: { data: content }, _meta: modernMeta() } }),
        'server',
      );
      assert.deepEqual(errors, []);
      assert.ok(!rules.includes('unreadable-response'), String(rules));
    }
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'echo', arguments: { data: content }, _meta: modernMeta() },
    });
    assert.ok(!evaluate(post(body), 'client').rules.includes('unreadable-request'));
  });

  test('a message exactly at the depth bound is read whole', () => {
    // The message is level 1, its result level 2: 127 nested objects make 128 levels.
    const atBound = resultMsg(nest(WALK_BOUNDS.depth - 1, 1));
    assert.equal(nesting(atBound).depth, WALK_BOUNDS.depth);
    assert.ok(!evaluate(subject({ response: atBound }), 'server').rules.includes('unreadable-response'));
    assert.ok(evaluate(subject({ response: resultMsg(nest(WALK_BOUNDS.depth, 1)) }), 'server').rules.includes('unreadable-response'));
  });
});

describe('the walker, the copy and the encoder', () => {
  test('walkStrings visits strings in document order with their paths, and records the first cut', () => {
    const seen: string[] = [];
    const b = budget();
    walkStrings(
      { a: 'one', b: [1, 'two', { c: 'three' }], d: nest(200, 'deep'), e: 'four' },
      b,
      (text, at) => void seen.push(`${boundedPointer(at())}=${text}`),
    );
    assert.deepEqual(seen, ['/a=one', '/b/1=two', '/b/2/c=three', '/e=four']);
    assert.equal(b.cut?.reason, 'depth');
  });

  test('walkStrings replaces strings in place; `whole` hands over a string that crosses the text bound uncut', () => {
    const value = { a: 'aaaa', b: ['bbbb'] };
    walkStrings(value, { nodes: 10, text: 6 }, (t) => t.toUpperCase());
    assert.deepEqual(value, { a: 'AAAA', b: ['BB'] });
    const whole = { a: 'aaaa', b: ['bbbb'] };
    walkStrings(whole, { nodes: 10, text: 6 }, (t) => t.toUpperCase(), { whole: true });
    assert.deepEqual(whole, { a: 'AAAA', b: ['BBBB'] });
  });

  test('copies and encodes values nested 100,000 levels deep, as JSON.stringify would where it can', () => {
    for (const array of [false, true]) {
      const deep = errorMsg(-32603, 'x', nest(DEEP, { s: 'é\u2028"', n: [1, null, -0, 1e21] }, array));
      const copy = copyOf(deep);
      assert.ok(copy !== undefined && copy !== deep);
      const text = jsonText(copy);
      assert.equal(text.length, jsonText(deep).length);
      assert.deepEqual(JSON.parse(encodeBody([copy], false).toString('utf8')).error.code, -32603);
      const shallow = { a: [1, 'x', null, undefined, { b: undefined, c: Number.NaN }], d: 'é' };
      assert.equal(jsonText(nest(DEEP, shallow, true)), '['.repeat(DEEP) + JSON.stringify(shallow) + ']'.repeat(DEEP));
    }
    const proto = JSON.parse('{"__proto__":{"x":1}}');
    const copy = copyJson(proto);
    assert.ok(Object.hasOwn(copy, '__proto__'));
    assert.equal(Object.getPrototypeOf(copy), Object.prototype);
  });

  test('boundedPointer keeps a pointer short by naming an ancestor', () => {
    assert.equal(boundedPointer(['response', 'error', 'a/b']), '/response/error/a~1b');
    const long = boundedPointer(['response', ...new Array(200).fill('key')]);
    assert.ok(long.length <= 240 && long.startsWith('/response/key/key'));
    assert.equal(boundedPointer(['response', 'x'.repeat(500)]), '/response');
  });
});
