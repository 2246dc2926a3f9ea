// The documentation is an interface too (README.md and docs/): its tables must list what the code
// has, no more, no less, wherever they live.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { drawStages } from '../../src/engine/order.ts';
import { PROXY_ERRORS } from '../../src/errors.ts';
import { buildProgram } from '../../src/cli-program.ts';
import { rulesMarkdown } from '../../src/rules/catalogue.ts';
import { RULES } from '../../src/rules/index.ts';
import { boundsMarkdown } from '../helpers/bounds-table.ts';
import { docBlock, docPages } from '../helpers/doc-blocks.ts';

test('the proxy error table lists every stable code with its HTTP status and JSON-RPC code', () => {
  const table = docBlock('proxy-errors');
  const rows = [...table.matchAll(/^\| `(WARDEN_\w+)` \| (\d+) \| (-\d+) \|/gm)].map((m) => [m[1], Number(m[2]), Number(m[3])]);
  const expected = Object.entries(PROXY_ERRORS).map(([code, e]) => [code, e.status, e.rpcCode]);
  assert.deepEqual(rows.sort(), expected.sort());
});

test('every option of `mcp-warden proxy` is documented', () => {
  const proxy = buildProgram().commands.find((c) => c.name() === 'proxy')!;
  const rows = [...docPages().values()].flatMap((page) => page.split('\n').filter((line) => line.startsWith('| `-')));
  for (const option of proxy.options) {
    const flag = new RegExp(`(^|[\\s\`,])${option.long}([\\s\`]|$)`);
    assert.ok(
      rows.some((row) => flag.test(row)),
      `README's option table misses ${option.long}`,
    );
  }
});

test('the README rule table is what `mcp-warden rules --format markdown` prints', () => {
  const table = docBlock('rules');
  assert.equal(table, rulesMarkdown(RULES), 'regenerate with: node --import tsx src/cli.ts rules --format markdown');
});

test('the README draws the stages per mode as the stage list and the order table say', () => {
  const drawn = docBlock('stages');
  assert.equal(drawn, `\`\`\`\n${drawStages()}\n\`\`\``);
});

test("the README's bounds table says what the code's bound constants hold", () => {
  const table = docBlock('bounds');
  assert.equal(table, boundsMarkdown(), 'regenerate from test/helpers/bounds-table.ts');
});
