// Failure text past the first 1,024 characters of a result (issue #24, a hostile run): an unknown
// tool's words anywhere in the text, when they name the called tool; a parameter named anywhere
// in an isError text; a failure statement after blank padding. Each with its legitimate look-alike.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Tool } from '../../src/exchange/sessions.ts';
import { TOOL_RULES } from '../../src/rules/tools.ts';
import { errorMsg, resultMsg, subject, toolResult } from '../helpers/subject.ts';

const rule = (id: string) => TOOL_RULES.find((r) => r.id === id)!;
const fires = (id: string, s: ReturnType<typeof subject>) => assert.equal(rule(id).check(s as never).length, 1, id);
const silent = (id: string, s: ReturnType<typeof subject>) => assert.deepEqual(rule(id).check(s as never), [], id);

/** 2,000 characters of a result's own words before what matters. */
const PADDING = `${'step ok; '.repeat(222)}\n`;

const isError = (tool: string, text: string) => subject({ tool, response: resultMsg(toolResult(text, { isError: true })) });
const plain = (tool: string, text: string) => subject({ tool, response: resultMsg(toolResult(text)) });

describe('unknown-tool: the words anywhere in the text, when they name the called tool', () => {
  for (const words of ['Unknown tool: foo', 'Unknown tool: "foo".', 'MCP error -32602: Tool foo not found', "Tool 'foo' does not exist"]) {
    test(`isError with 2,000 characters before ${JSON.stringify(words)}`, () => {
      fires('unknown-tool-as-iserror', isError('foo', PADDING + words));
    });
  }
  test('a -32603 whose long message ends naming the called tool', () => {
    fires('unknown-tool-wrong-code', subject({ tool: 'foo', response: errorMsg(-32603, `${PADDING}Unknown tool: foo`) }));
  });
  test('look-alike: a long isError text naming another unknown tool stays silent', () => {
    silent('unknown-tool-as-iserror', isError('run_pipeline', `${PADDING}step 3 said: Unknown tool: fetch_rows`));
  });
  test('look-alike: a long isError text with the bare phrase far in stays silent', () => {
    silent('unknown-tool-as-iserror', isError('run_pipeline', `${PADDING}the planner picked an unknown tool and stopped`));
    silent('unknown-tool-wrong-code', subject({ tool: 'run_pipeline', response: errorMsg(-32603, `${PADDING}unknown tool in step 3`) }));
  });
  test('look-alike: a longer name that starts with the called one stays silent', () => {
    silent('unknown-tool-as-iserror', isError('foo', `${PADDING}Unknown tool: foo_v2`));
  });
  test('the opening statement needs no name, as before', () => {
    fires('unknown-tool-as-iserror', isError('foo', 'Unknown tool'));
  });
  test('a 4 MiB text of near-misses is read in one pass', () => {
    const text = `${PADDING}${'Unknown tool: x tool  y  was  not '.repeat(120_000)}`;
    silent('unknown-tool-as-iserror', isError('foo', text));
  });
});

describe('vague-iserror: a failing parameter named anywhere in the text', () => {
  const search: Tool = {
    name: 'search',
    inputSchema: { type: 'object', properties: { limit: { type: 'integer', maximum: 50 } } },
  };
  const call = (text: string) =>
    subject({
      tool: 'search',
      params: { name: 'search', arguments: { limit: 500 } },
      response: resultMsg(toolResult(text, { isError: true })),
      session: { tools: new Map([['search', search]]), toolsComplete: true },
    });
  test('named after 8 KiB of other text: silent', () => {
    silent('vague-iserror', call(`${PADDING.repeat(5)}limit must be at most 50`));
  });
  test('named nowhere: fires, however long the text', () => {
    fires('vague-iserror', call(`${PADDING.repeat(5)}the request was rejected`));
  });
});

describe('silent-success: the statement after blank padding', () => {
  const blank = `${' '.repeat(1000)}\n${'\n'.repeat(1000)}`;
  test('2,000 blank characters before "Error: …" fire it, pointing at the block', () => {
    const s = subject({
      tool: 'query_db',
      response: resultMsg(
        toolResult('', {
          content: [
            { type: 'text', text: blank },
            { type: 'text', text: 'Error: connection refused' },
          ],
        }),
      ),
    });
    const [f] = rule('silent-success').check(s as never);
    assert.equal(f?.pointer, '/response/result/content/1/text');
  });
  test('a blank run inside one block: fires', () => {
    fires('silent-success', plain('query_db', `${blank}Failed to connect to database.`));
  });
  for (const [what, text] of [
    ['a listing holding an error line', `${blank}Build log:\nError: x is undefined\nDone in 3s`],
    ['search results', `${blank}Found 3 matches:\n- Error: foo (docs/a.md)\n- Error: bar (docs/b.md)`],
    ['a log line', `${blank}2026-01-01 12:00:00 ERROR payment declined`],
    ['a tally', `${blank}Failed: 0, Passed: 42`],
  ] as const) {
    test(`look-alike after blank padding: ${what} stays silent`, () => silent('silent-success', plain('query_db', text)));
  }
  test('look-alike: a failure line after other text stays silent (the text opens with something else)', () => {
    silent('silent-success', plain('query_db', `${PADDING}Error: connection refused`));
  });
});
