// invalid-request-code (issue #26): JSON that is not a valid request, alone in its POST, must get
// -32600 Invalid Request; -32603 or -32700 is flagged; a valid request, a malformed response, a
// batch, a header rejection and a rejection before the body is read are not this rule's.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJsonText } from '../../src/codec/json-body.ts';
import { FRAMING_RULES } from '../../src/rules/framing.ts';
import type { PostSubject } from '../../src/rules/types.ts';
import { session } from '../helpers/subject.ts';

const rule = FRAMING_RULES.find((r) => r.id === 'invalid-request-code') as { check: (s: PostSubject) => Array<{ pointer: string }> };

function post(body: string, code: number, status = 400, id: unknown = null): PostSubject {
  const reply = JSON.stringify({ jsonrpc: '2.0', id, error: { code, message: 'rejected' } });
  return {
    kind: 'post',
    version: '2025-06-18',
    requestHeaders: {},
    request: decodeJsonText(body),
    status,
    contentType: 'application/json',
    responseHeaders: {},
    response: decodeJsonText(reply),
    responseBytes: reply.length,
    session: session(),
  };
}

const INVALID = [
  '{"jsonrpc":"2.0","id":1,"method":42}',
  '{"jsonrpc":"1.0","id":1,"method":"tools/list"}',
  '{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}',
  '42',
];

describe('invalid-request-code', () => {
  for (const body of INVALID) {
    for (const code of [-32603, -32700]) {
      test(`${body} answered ${code}: fires`, () => assert.equal(rule.check(post(body, code))[0]?.pointer, '/response/error/code'));
    }
    test(`${body} answered -32600: silent`, () => assert.deepEqual(rule.check(post(body, -32600)), []));
  }
  test('on a 500 too; not on a rejection before the body is read (406)', () => {
    assert.equal(rule.check(post(INVALID[0]!, -32603, 500)).length, 1);
    assert.deepEqual(rule.check(post(INVALID[0]!, -32000, 406)), []);
  });
  test("a valid request answered -32603 is not this rule's", () => {
    assert.deepEqual(rule.check(post('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', -32603)), []);
  });
  test('a malformed response (no method), a batch, a header rejection: silent', () => {
    assert.deepEqual(rule.check(post('{"jsonrpc":"2.0","id":1}', -32603)), []);
    assert.deepEqual(rule.check(post('[{"jsonrpc":"2.0","id":1,"method":42}]', -32603)), []);
    assert.deepEqual(rule.check(post(INVALID[0]!, -32020)), []);
  });
  test('an id where none could be read (a bare value, an object id): fires at /response/id; null or absent: silent', () => {
    for (const body of ['42', '{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', '{"jsonrpc":"2.0","method":42}']) {
      assert.deepEqual(
        rule.check(post(body, -32600, 400, 7)).map((r) => r.pointer),
        ['/response/id'],
        body,
      );
      assert.deepEqual(rule.check(post(body, -32600, 400, null)), [], body);
    }
    const noId = decodeJsonText('{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"}}');
    assert.deepEqual(rule.check({ ...post('42', -32600), response: noId }), []);
  });
  test('a readable id echoed (or null) on -32600: silent; a wrong code and a made-up id: both flagged', () => {
    assert.deepEqual(rule.check(post(INVALID[0]!, -32600, 400, 1)), []);
    assert.deepEqual(
      rule.check(post('42', -32603, 400, 1)).map((r) => r.pointer),
      ['/response/error/code', '/response/id'],
    );
  });
  test("a body that is not JSON is parse-error-code's", () => {
    assert.deepEqual(rule.check(post('{"jsonrpc":', -32603)), []);
  });
});
