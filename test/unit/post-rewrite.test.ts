// decidePost: what enforce sends instead of the server's answer to a POST that opened no request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJsonText } from '../../src/codec/json-body.ts';
import { loadPolicyFile, loadPolicyText } from '../../src/config/load.ts';
import { police } from '../../src/rewrite/decide.ts';
import { decidePost } from '../../src/rewrite/post-rewrite.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { RuleEngine } from '../../src/rules/engine.ts';
import { RULES } from '../../src/rules/index.ts';
import type { PostSubject } from '../../src/rules/types.ts';
import { assertValidResponse } from '../helpers/schema-check.ts';
import { session } from '../helpers/subject.ts';

const loaded = await loadPolicyFile('config/enforce.yaml', { rewritable: REWRITABLE });
assert.ok(loaded.ok);
const enforce = loaded.policy;
const audit = loadPolicyText('{}', 'a.yaml', { rewritable: REWRITABLE });
assert.ok(audit.ok);
const engine = new RuleEngine(RULES, (id, err) => assert.fail(`${id}: ${String(err)}`));

const post = (request: string, status: number, response?: string): PostSubject => ({
  kind: 'post',
  version: '2025-06-18',
  requestHeaders: {},
  request: decodeJsonText(request),
  status,
  contentType: response === undefined ? undefined : 'application/json',
  responseHeaders: {},
  response: response === undefined ? undefined : decodeJsonText(response),
  responseBytes: response?.length ?? 0,
  session: session(),
});
const decided = (s: PostSubject, policy = enforce) =>
  decidePost(
    police(engine.evaluate(s, 'server'), policy, { method: undefined, tool: undefined }, (r) => engine.groupOf(r)),
    s,
    policy,
  );

test('a body that did not parse, answered with an empty 200 or 400: -32700 with id null on 400, valid in every version', () => {
  for (const status of [200, 202, 400]) {
    const d = decided(post('{"jsonrpc":', status));
    assert.equal(d.kind, 'mutate', String(status));
    if (d.kind !== 'mutate') continue;
    assert.deepEqual(d.message, {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'Parse error', data: { reason: 'parse-error-unanswered', upstreamStatus: status } },
    });
    assert.equal(d.status, 400);
    assert.deepEqual(d.rules, ['parse-error-unanswered']);
    // id null is what JSON-RPC 2.0 gives an unreadable request; the 2025-11-25+ schemas want it absent or an id, so only the error part is checked there.
    assertValidResponse({ ...d.message, id: 0 }, '2025-11-25');
  }
});

test('passes: the right answer, a readable request, audit mode, a rejection before the body is read', () => {
  assert.equal(
    decided(post('{"jsonrpc":', 400, '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}')).kind,
    'pass',
  );
  assert.equal(decided(post('{"jsonrpc":"2.0","id":1,"method":"ping"}', 400)).kind, 'pass');
  assert.equal(decided(post('{"jsonrpc":', 400), audit.policy).kind, 'pass');
  assert.equal(decided(post('{"jsonrpc":', 415)).kind, 'pass');
});
