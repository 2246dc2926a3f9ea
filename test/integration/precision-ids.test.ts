// Ids kept exactly (issue 11): a rewritten answer carries the request's id token byte for byte
// (1.0, 1e2, -0, integers beyond 2^53, strings written with escapes), and two integers beyond 2^53
// that JSON.parse rounds to one double stay two requests. Through the real proxy, enforce.yaml.
//
// The codec keeps each id's raw text (codec/jsonrpc.ts idTokenOf) and the encoder writes it back
// (rewrite/encode.ts withIdToken); the open request must carry its token from the correlator
// (exchange/correlate.ts, exchange/table.ts) and the transport must key its requests by it. Until
// that edit lands these tests are todo.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadPolicyFile } from '../../src/config/load.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { runScenario, type ScenarioResult } from '../helpers/rule-scenario.ts';

const loaded = await loadPolicyFile('config/enforce.yaml', { rewritable: REWRITABLE });
assert.ok(loaded.ok);
const enforce = loaded.policy;

const TODO = {};

const TOKENS = ['1.0', '1e2', '-0', '12345678901234567890', '9007199254740993', '"\\u0041"', '"a\\/b"', '"\\ud83d\\ude00"'];
const BIG = ['12345678901234567890', '9007199254740993'];

/** A tools/call whose id is written as `token`. */
const callWith = (token: string): string =>
  `{"jsonrpc":"2.0","id":${token},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`;

/** The raw JSON text of the top-level "id" member of a body the client got. */
function idText(body: string): string {
  const m = /^\{"jsonrpc":"2\.0","id":(.*?),"(?:error|result)":/.exec(body);
  assert.ok(m, `the answer starts {"jsonrpc":"2.0","id":...: ${body}`);
  return m[1]!;
}

const rewritten = (res: ScenarioResult) => res.records.filter((r) => r.msg === 'rewrite');

describe("a rewritten answer carries the request's id token byte for byte", () => {
  for (const token of TOKENS) {
    test(`${token}: an HTML 500 becomes an error with id ${token}`, TODO, async () => {
      const res = await runScenario({
        version: '2025-06-18',
        request: { method: 'tools/call', raw: callWith(token) },
        respond: () => ({ status: 500, body: '<html><body>Internal Server Error</body></html>', headers: { 'content-type': 'text/html' } }),
        proxy: { policy: () => enforce },
      });
      assert.equal(rewritten(res).length, 1);
      assert.equal(idText(res.body), token);
    });

    // An integer beyond 2^53 echoed as JSON.parse rounded it is another id (see the last test).
    if (BIG.includes(token)) continue;
    test(
      `${token}: the server's echo (as JSON.parse and JSON.stringify left it) gets the request's token back when its code is rewritten`,
      TODO,
      async () => {
        const res = await runScenario({
          version: '2025-06-18',
          request: { method: 'tools/call', raw: callWith(token) },
          // The SDK answers with the id it parsed: 1.0 comes back as 1, "\u0041" as "A".
          respond: (req) => ({ json: { jsonrpc: '2.0', id: req?.id, error: { code: -32050, message: 'Boom' } } }),
          proxy: { policy: () => enforce },
        });
        assert.equal(rewritten(res).length, 1);
        assert.equal(idText(res.body), token);
        assert.equal((JSON.parse(res.body) as { error: { code: number } }).error.code, -32603);
      },
    );
  }

  test('a body nobody rewrites goes out as it came, id and all (no re-encoding)', async () => {
    const answer = '{"jsonrpc":"2.0","id":1.0,"result":{"content":[{"type":"text","text":"hi"}]}}';
    const res = await runScenario({
      version: '2025-06-18',
      request: { method: 'tools/call', raw: callWith('1.0') },
      respond: () => ({ body: answer, headers: { 'content-type': 'application/json' } }),
      proxy: { policy: () => enforce },
    });
    assert.equal(res.body, answer);
  });
});

describe('two integers beyond 2^53 are two requests', () => {
  test('a batch of 9007199254740993 and 9007199254740992: both answered, neither replaced', TODO, async () => {
    const a = '9007199254740993';
    const b = '9007199254740992';
    const result = '{"content":[{"type":"text","text":"hi"}]}';
    const res = await runScenario({
      version: '2025-03-26',
      request: { method: 'tools/call', raw: `[${callWith(a)},${callWith(b)}]` },
      respond: () => ({
        body: `[{"jsonrpc":"2.0","id":${a},"result":${result}},{"jsonrpc":"2.0","id":${b},"result":${result}}]`,
        headers: { 'content-type': 'application/json' },
      }),
    });
    const exchanges = res.records.filter(
      (r) => r.msg === 'exchange' && r.from === 'client' && r.method === 'tools/call' && r.id !== 'test-setup',
    );
    assert.deepEqual(
      exchanges.map((r) => [r.outcome, r.expired]),
      [
        ['result', undefined],
        ['result', undefined],
      ],
    );
    assert.deepEqual(
      res.violations.map((v) => v.rule),
      [],
    );
  });

  test(
    'a server that echoes 9007199254740993 as JSON.parse rounded it (9007199254740992) answered another id: answer-foreign-id',
    TODO,
    async () => {
      const res = await runScenario({
        version: '2025-06-18',
        request: { method: 'tools/call', raw: callWith('9007199254740993') },
        respond: (req) => ({ json: { jsonrpc: '2.0', id: req?.id, result: { content: [{ type: 'text', text: 'hi' }] } } }),
      });
      assert.ok(
        res.violations.some((v) => v.rule === 'answer-foreign-id'),
        JSON.stringify(res.violations.map((v) => v.rule)),
      );
    },
  );
});
