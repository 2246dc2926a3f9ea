// parse-error-code and parse-error-id on every HTTP status that answered the body (issue #24, a
// hostile run): a 500 carrying -32603 for a body that is not JSON is judged as a 200 or 400 is;
// the rejections that come before the body is read (401, 403, 404, 405, 406, 413, 415, 429) keep
// their own code, and no status makes an id readable.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJsonText } from '../../src/codec/json-body.ts';
import { FRAMING_RULES } from '../../src/rules/framing.ts';
import type { PostSubject } from '../../src/rules/types.ts';
import { session } from '../helpers/subject.ts';

const rule = (id: string) => FRAMING_RULES.find((r) => r.id === id)!;
const judge = (id: string, s: PostSubject) => (rule(id) as { check: (s: PostSubject) => unknown[] }).check(s);

function post(status: number | undefined, code: number, id: unknown = null, wire?: PostSubject['wire']): PostSubject {
  const reply = JSON.stringify({ jsonrpc: '2.0', id, error: { code, message: 'Internal error' } });
  return {
    kind: 'post',
    ...(wire ? { wire } : {}),
    version: '2025-06-18',
    requestHeaders: {},
    request: decodeJsonText('{"jsonrpc":"2.0","id":1,"method":'),
    status,
    contentType: 'application/json',
    responseHeaders: {},
    response: decodeJsonText(reply),
    responseBytes: reply.length,
    session: session(),
  };
}

describe('parse-error-code on every status that answered the body', () => {
  for (const status of [500, 502, 503, 422, 409]) {
    test(`HTTP ${status} with -32603: fires`, () => assert.equal(judge('parse-error-code', post(status, -32603)).length, 1));
    test(`HTTP ${status} with -32700: silent`, () => assert.deepEqual(judge('parse-error-code', post(status, -32700)), []));
  }
  for (const status of [401, 403, 404, 405, 406, 413, 415, 429]) {
    test(`HTTP ${status}, a rejection before the body is read, keeps its own code: silent`, () =>
      assert.deepEqual(judge('parse-error-code', post(status, -32000)), []));
  }
  test('2xx and 400 as before', () => {
    assert.equal(judge('parse-error-code', post(200, -32603)).length, 1);
    assert.equal(judge('parse-error-code', post(400, -32600)).length, 1);
  });
});

describe('parse-error-id on every status', () => {
  for (const status of [500, 406, 401]) {
    test(`HTTP ${status} with a made-up id: fires`, () => assert.equal(judge('parse-error-id', post(status, -32700, 1)).length, 1));
    test(`HTTP ${status} with id null: silent`, () => assert.deepEqual(judge('parse-error-id', post(status, -32000)), []));
  }
  test('stdio (no status): an answer on the stream, matched to the line by the engine, is judged; none is silent', () => {
    assert.equal(judge('parse-error-code', post(undefined, -32603, null, 'stdio')).length, 1);
    assert.deepEqual(judge('parse-error-code', post(undefined, -32700, null, 'stdio')), []);
    assert.deepEqual(judge('parse-error-code', { ...post(undefined, -32603, null, 'stdio'), response: undefined }), []);
    assert.deepEqual(judge('parse-error-id', { ...post(undefined, -32700, 1, 'stdio'), response: undefined }), []);
  });
});
