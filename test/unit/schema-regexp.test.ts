// Schema patterns under RE2 (src/rules/schema-regexp.ts): ECMA-262's meaning kept, catastrophic
// patterns answered in linear time, a pattern RE2 cannot run refused and never run by V8; and what
// the validator and coverage make of them (tool-arguments.ts, engine/coverage.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { skippedSchema } from '../../src/engine/coverage.ts';
import { linearRegExp, UnsafePattern } from '../../src/rules/schema-regexp.ts';
import { unsafePattern, validateArguments } from '../../src/rules/tool-arguments.ts';
import { assertLinear } from '../helpers/growth.ts';
import { subject } from '../helpers/subject.ts';

const POISON = `${'a'.repeat(40)}!`;

/** Runs `fn`, and returns the sources of the V8 RegExps executed meanwhile. */
function v8Runs(fn: () => void): string[] {
  const proto = RegExp.prototype;
  const { exec, test: run } = proto;
  const sources: string[] = [];
  proto.exec = function (this: RegExp, s: string) {
    sources.push(this.source);
    return exec.call(this, s);
  };
  proto.test = function (this: RegExp, s: string) {
    sources.push(this.source);
    return run.call(this, s);
  };
  try {
    fn();
  } finally {
    proto.exec = exec;
    proto.test = run;
  }
  return sources;
}

describe('linearRegExp keeps what an ECMA-262 pattern means', () => {
  const cases: Array<[pattern: string, inputs: string[]]> = [
    ['^\\s+$', [' ', '\u00a0', '\ufeff', '\u2028', '\u3000', '\v', 'a', '\u180e', '\u200b']],
    ['^\\S+$', [' ', 'a', '\u00a0', '😀']],
    ['^[\\s\\d]+$', [' 1', '\u3000', 'x']],
    ['^[^\\s]$', [' ', 'a', '\u2029']],
    ['^[^\\S]$', [' ', 'a', '\u2029']],
    ['^.$', ['\n', '\r', '\u2028', '\u2029', 'a', '😀', '\u0085']],
    ['^[]$', ['', 'a']],
    ['^[^]$', ['a', '\n', '😀']],
    ['^[\\b]$', ['\b', 'b']],
    ['\\bfoo\\b', ['a foo b', 'afoob']],
    ['^\\uD83D\\uDE00$', ['😀', '\uD83D']],
    ['^\\u{1F600}$', ['😀']],
    ['^\\u00e9$', ['é', 'e']],
    ['^[[:alpha:]$', ['a', '[', ':', 'b']],
    ['^\\/\\.[\\-]?\\$$', ['/.$', '/.-$', 'a.$']],
    ['^\\cJ\\0\\x41\\t\\n\\v\\f\\r$', ['\n\0A\t\n\v\f\r']],
    ['^(?<year>\\d{4})-(?:\\d{2})$', ['2024-01', '24-01']],
    ['^\\p{L}+$', ['héllo', 'h1']],
    ['^\\P{Lu}$', ['a', 'A']],
    ['^[a-z]{2,3}?$', ['ab', 'abcd']],
    ['a$', ['a\n', 'ba']],
    ['^a|b$', ['ax', 'xb', 'x']],
    ['^\\w+@\\w+\\.\\w+$', ['a@b.co', 'a@b', 'é@b.co']],
    ['^\\W\\D$', ['é!', 'a1']],
    ['', ['', 'x']],
  ];
  for (const [pattern, inputs] of cases) {
    test(JSON.stringify(pattern), () => {
      const v8 = new RegExp(pattern, 'u');
      const re2 = linearRegExp(pattern, 'u');
      assert.deepEqual(
        inputs.map((s) => re2.test(s)),
        inputs.map((s) => v8.test(s)),
      );
    });
  }

  test('\\s, \\S and . agree with V8 on every BMP character', () => {
    for (const pattern of ['^\\s$', '^\\S$', '^.$', '^[a\\s]$', '^[^\\S]$']) {
      const v8 = new RegExp(pattern, 'u');
      const re2 = linearRegExp(pattern, 'u');
      for (let cp = 0; cp < 0x10000; cp++) {
        const s = String.fromCharCode(cp);
        if (re2.test(s) !== v8.test(s)) assert.fail(`${pattern} on U+${cp.toString(16)}`);
      }
    }
  });

  test("each compiled pattern names itself as ajv's cache key", () => {
    assert.equal(String(linearRegExp('a+', 'u')), '/a+/u');
    assert.notEqual(String(linearRegExp('a+', 'u')), String(linearRegExp('b+', 'u')));
  });
});

describe('catastrophic patterns take linear time', () => {
  for (const [pattern, bad, good] of [
    ['^(a+)+$', POISON, 'a'.repeat(40)],
    ['^(\\w+\\s?)*$', `${'word '.repeat(20)}!`, 'word '.repeat(20)],
    ['^(x+x+)+y$', 'x'.repeat(40), `${'x'.repeat(40)}y`],
    ['^([a-z]+)+$', POISON, 'a'.repeat(40)],
  ] as const) {
    test(`${pattern}: the right answer, where V8 would backtrack for hours`, () => {
      const re2 = linearRegExp(pattern, 'u');
      assert.deepEqual([re2.test(bad), re2.test(good)], [false, true]);
    });
  }

  test('^(a+)+$ grows linearly with its input', () => {
    const re2 = linearRegExp('^(a+)+$', 'u');
    assertLinear('^(a+)+$', (scale) => {
      const input = `${'a'.repeat(2_000 * scale)}!`;
      return () => assert.equal(re2.test(input), false);
    });
  });
});

describe('a pattern RE2 cannot run is refused, never run by V8', () => {
  for (const [pattern, why] of [
    ['(a)\\1', 'a backreference'],
    ['(?<n>a)\\k<n>', 'a named backreference'],
    ['^(?=(a+)+$)a', 'a lookaround assertion'],
    ['^(?!b)a', 'a lookaround assertion'],
    ['(?<=a)b', 'a lookaround assertion'],
    ['(?<!a)b', 'a lookaround assertion'],
    ['\\p{Letter}', /invalid character class range/],
    ['a{1001}', /invalid repeat count/],
  ] as const) {
    test(JSON.stringify(pattern), () => {
      let thrown: unknown;
      const ran = v8Runs(() => {
        try {
          linearRegExp(pattern, 'u');
        } catch (err) {
          thrown = err;
        }
      });
      assert.ok(thrown instanceof UnsafePattern, String(thrown));
      assert.equal(thrown.pattern, pattern);
      if (typeof why === 'string') assert.equal(thrown.message, why);
      else assert.match(thrown.message, why);
      assert.ok(!ran.includes(new RegExp(pattern, 'u').source), 'V8 never ran it');
    });
  }

  test('a pattern ECMA-262 rejects is a syntax error, not an unsafe one', () => {
    for (const pattern of ['[', '\\z', 'a{', '(?<n>a)(?<n>b)']) {
      assert.throws(
        () => linearRegExp(pattern, 'u'),
        (err: unknown) => err instanceof SyntaxError,
        pattern,
      );
    }
  });

  test('only the u flag ajv passes is read', () => {
    assert.throws(() => linearRegExp('a', ''), /u flag/);
  });
});

const EVIL = '^(a+)+$';

describe('validateArguments runs schema patterns under RE2', () => {
  const VERSION = '2025-11-25';
  test('pattern, patternProperties, a $defs schema and additionalProperties: the right verdict', () => {
    const schema = {
      type: 'object',
      properties: { q: { type: 'string', pattern: EVIL }, r: { $ref: '#/$defs/word' } },
      patternProperties: { [EVIL]: { type: 'integer' } },
      additionalProperties: { $ref: '#/$defs/word' },
      $defs: { word: { type: 'string', pattern: '^(b+)+$' } },
    };
    const v = validateArguments(schema, { q: POISON, r: `${'b'.repeat(40)}!`, [POISON]: `${'b'.repeat(40)}!`, aaaa: 'x' }, VERSION);
    assert.deepEqual(v?.errors.map((e) => `${e.path} ${e.message}`).sort(), [
      '/aaaa must be integer',
      `/${POISON} must match pattern "^(b+)+$"`,
      '/q must match pattern "^(a+)+$"',
      '/r must match pattern "^(b+)+$"',
    ]);
    assert.deepEqual(validateArguments(schema, { q: 'aaa', r: 'bb', aaaa: 1, c: 'b' }, VERSION), { valid: true, errors: [] });
  });

  test('a draft-07 schema and an outputSchema-shaped one too', () => {
    const schema = { type: 'object', properties: { r: { type: 'string', pattern: EVIL } }, definitions: {} };
    assert.equal(validateArguments(schema, { r: POISON }, '2025-06-18')?.valid, false);
    assert.equal(validateArguments(schema, { r: 'a' }, '2025-06-18')?.valid, true);
  });

  test('a schema with a pattern RE2 cannot run cannot tell, and says which pattern; V8 never runs it', () => {
    const schema = { type: 'object', properties: { q: { type: 'string', pattern: '^(?=(a+)+$)a' } } };
    let verdict: unknown;
    const ran = v8Runs(() => {
      verdict = validateArguments(schema, { q: POISON }, VERSION);
    });
    assert.equal(verdict, undefined);
    assert.ok(!ran.includes('^(?=(a+)+$)a'));
    assert.equal(unsafePattern(schema, VERSION)?.pattern, '^(?=(a+)+$)a');
    assert.equal(unsafePattern(schema, VERSION), unsafePattern(schema, VERSION), 'cached with the schema');
  });

  test('a pattern no rule reaches ($defs nobody refers to) leaves the schema judged', () => {
    const schema = { type: 'object', $defs: { unused: { type: 'string', pattern: '(a)\\1' } } };
    assert.deepEqual(validateArguments(schema, {}, VERSION), { valid: true, errors: [] });
    assert.equal(unsafePattern(schema, VERSION), undefined);
  });

  test('a pattern that is not ECMA-262 is a schema that does not compile, as before: not unsafe', () => {
    const schema = { type: 'object', properties: { q: { type: 'string', pattern: '(' } } };
    assert.equal(validateArguments(schema, { q: 'x' }, VERSION), undefined);
    assert.equal(unsafePattern(schema, VERSION), undefined);
  });

  test("the meta-schema's own patterns still judge a schema ($anchor)", () => {
    assert.equal(validateArguments({ type: 'object', $anchor: 'ok' }, {}, VERSION)?.valid, true);
    assert.equal(validateArguments({ type: 'object', $anchor: '1bad' }, {}, VERSION), undefined);
  });
});

describe('skippedSchema: only a check a rule would make is skipped', () => {
  const VERSION = '2025-11-25';
  const unsafe = { type: 'object', properties: { q: { type: 'string', pattern: '(?=a)' } } };
  const withTools = (tool: Record<string, unknown>) => ({
    tools: new Map([['t', { name: 't', inputSchema: { type: 'object' }, ...tool }]]),
  });
  const call = (version: string, response: unknown, tool: Record<string, unknown>) =>
    subject({ version, tool: 't', params: { name: 't', arguments: { q: 'x' } }, response, session: withTools(tool) });
  const error = (code: number) => ({ jsonrpc: '2.0', id: 7, error: { code, message: 'no' } });
  const result = (body: Record<string, unknown>) => ({ jsonrpc: '2.0', id: 7, result: { content: [], ...body } });

  test('inputSchema: an error about the arguments (from 2025-11-25), or an isError result', () => {
    const skipped = (version: string, response: unknown) => skippedSchema(call(version, response, { inputSchema: unsafe }))?.schema;
    assert.equal(skipped(VERSION, error(-32602)), 'inputSchema');
    assert.equal(skipped(VERSION, result({ isError: true })), 'inputSchema');
    assert.equal(skipped('2025-06-18', result({ isError: true })), 'inputSchema');
    assert.equal(skipped('2025-06-18', error(-32602)), undefined, 'a protocol error is right before 2025-11-25');
    assert.equal(skipped(VERSION, error(-32601)), undefined, 'method not found');
    assert.equal(skipped(VERSION, error(-32700)), undefined, 'a parse error');
    assert.equal(skipped(VERSION, result({})), undefined, 'a success validates no arguments');
  });

  test('outputSchema: a result with structuredContent, from 2025-06-18', () => {
    const skipped = (version: string, response: unknown) => skippedSchema(call(version, response, { outputSchema: unsafe }))?.schema;
    assert.equal(skipped(VERSION, result({ structuredContent: { q: 'a' } })), 'outputSchema');
    assert.equal(skipped('2025-03-26', result({ structuredContent: { q: 'a' } })), undefined);
    assert.equal(skipped(VERSION, result({ structuredContent: { q: 'a' }, isError: true })), undefined);
    assert.equal(skipped(VERSION, result({})), undefined, 'no structuredContent to validate');
  });

  test('a schema RE2 runs skips nothing', () => {
    assert.equal(skippedSchema(call(VERSION, error(-32602), { inputSchema: { type: 'object' } })), undefined);
  });
});
