// A batch answered with two responses for one id (issue 11): the client can take only one of them
// as the answer, and which one is the server's guess. batch-duplicate-answer flags it on the POST,
// under every version (an array answering an array is judged wherever it travels; batch-not-allowed
// says whether the client could send one). Through the real proxy.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { loadPolicyFile } from '../../src/config/load.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { assertFires, assertSilent, MODERN, runScenario, type Reply } from '../helpers/rule-scenario.ts';

const VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', MODERN];
const META = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };

/** A batch of tools/call requests with these ids (raw JSON text of each id). */
function batch(version: string, ids: string[]): string {
  const params = JSON.stringify({ name: 'echo', arguments: { text: 'hi' }, ...(version === MODERN ? { _meta: META } : {}) });
  return `[${ids.map((id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${params}}`).join(',')}]`;
}

/** The server answers with these ids, in this order (raw JSON text of each id). */
const answers = (version: string, ids: string[]) => (): Reply => {
  const result = JSON.stringify({ content: [{ type: 'text', text: 'hi' }], ...(version === MODERN ? { resultType: 'complete' } : {}) });
  return {
    body: `[${ids.map((id) => `{"jsonrpc":"2.0","id":${id},"result":${result}}`).join(',')}]`,
    headers: { 'content-type': 'application/json' },
  };
};

describe('batch-duplicate-answer', () => {
  for (const version of VERSIONS) {
    test(`${version}: two answers for id 1 in one batch fire it, at the second one`, async () => {
      const res = await runScenario({
        version,
        request: { method: 'tools/call', raw: batch(version, ['1', '2']) },
        respond: answers(version, ['1', '1']),
      });
      const v = assertFires(res, 'batch-duplicate-answer');
      assert.equal(v.severity, 'error');
      assert.equal(v.pointer, '/response/1/id');
      assert.match(String(v.message), /id 1/);
    });

    test(`${version}: one answer per request stays silent, ids of both types too`, async () => {
      const res = await runScenario({
        version,
        request: { method: 'tools/call', raw: batch(version, ['1', '"1"']) },
        respond: answers(version, ['"1"', '1']),
      });
      assertSilent(res, 'batch-duplicate-answer');
    });
  }

  test("a client batch that repeats an id may get an answer for each: silent (batch-not-allowed, the client's rules, say the rest)", async () => {
    const res = await runScenario({
      version: '2025-03-26',
      request: { method: 'tools/call', raw: batch('2025-03-26', ['7', '7']) },
      respond: answers('2025-03-26', ['7', '7']),
    });
    assertSilent(res, 'batch-duplicate-answer');
  });

  test('three answers for one id report it once', async () => {
    const res = await runScenario({
      version: '2025-03-26',
      request: { method: 'tools/call', raw: batch('2025-03-26', ['"a"', '"b"']) },
      respond: answers('2025-03-26', ['"a"', '"a"', '"a"', '"b"']),
    });
    assert.equal(res.violations.filter((v) => v.rule === 'batch-duplicate-answer').length, 1);
  });

  test('errors with id null (several unreadable requests) are not one id answered twice', async () => {
    const res = await runScenario({
      version: '2025-03-26',
      request: { method: 'tools/call', raw: '[1,2]' },
      respond: () => ({
        status: 400,
        body: JSON.stringify([1, 2].map(() => ({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } }))),
        headers: { 'content-type': 'application/json' },
      }),
    });
    assertSilent(res, 'batch-duplicate-answer');
  });
});

describe('under enforce, a batch answering one id twice (#25: a client may read either)', () => {
  const enforce = async () => {
    const loaded = await loadPolicyFile(fileURLToPath(new URL('../../config/enforce.yaml', import.meta.url)), { rewritable: REWRITABLE });
    assert.ok(loaded.ok);
    return loaded.policy;
  };
  const call = (id: number, name: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { text: 'hi' } } });
  const unknown = (id: number) => ({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'Unknown tool: nosuch' }] } });
  const echo = (id: number) => ({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'hi' }] } });

  test("the repeat of an answer the policy replaced goes too: the client reads only the proxy's -32602", async () => {
    const policy = await enforce();
    const res = await runScenario({
      version: '2025-03-26',
      request: { method: 'tools/call', raw: JSON.stringify([call(1, 'nosuch'), call(2, 'echo')]) },
      respond: () => ({ json: [unknown(1), echo(2), unknown(1)] }),
      proxy: { policy: () => policy },
    });
    const body = JSON.parse(res.body) as Array<{ id: number; error?: { code: number } }>;
    assert.deepEqual(
      body.map((m) => [m.id, m.error?.code]),
      [
        [1, -32602],
        [2, undefined],
      ],
      res.body,
    );
    assertFires(res, 'batch-duplicate-answer');
  });

  test('a repeat of an answer nothing changed is left as it came (only logged)', async () => {
    const policy = await enforce();
    const served = JSON.stringify([echo(1), echo(2), echo(1)]);
    const res = await runScenario({
      version: '2025-03-26',
      request: { method: 'tools/call', raw: JSON.stringify([call(1, 'echo'), call(2, 'echo')]) },
      respond: () => ({ body: served, headers: { 'content-type': 'application/json' } }),
      proxy: { policy: () => policy },
    });
    assert.equal(res.body, served);
    assertFires(res, 'batch-duplicate-answer');
  });
});
