// batch-duplicate-answer on hand-built POST subjects: ids compared as the correlator compares them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJsonText } from '../../src/codec/json-body.ts';
import { batchDuplicateAnswer } from '../../src/rules/batch-answers.ts';
import type { PostSubject } from '../../src/rules/types.ts';
import { session } from '../helpers/subject.ts';

const post = (request: string, response: string): PostSubject => ({
  kind: 'post',
  version: '2025-03-26',
  requestHeaders: {},
  request: decodeJsonText(request),
  status: 200,
  contentType: 'application/json',
  responseHeaders: {},
  response: decodeJsonText(response),
  responseBytes: response.length,
  session: session(),
});
const req = (id: string) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}`;
const res = (id: string) => `{"jsonrpc":"2.0","id":${id},"result":{}}`;
const fired = (request: string[], response: string[]) =>
  batchDuplicateAnswer.check(post(`[${request.join(',')}]`, `[${response.join(',')}]`)).map((r) => r.pointer);

test('two integers beyond 2^53 that JSON.parse rounds to one double are two ids: one answer each is silent', () => {
  assert.deepEqual(fired([req('9007199254740993'), req('9007199254740992')], [res('9007199254740993'), res('9007199254740992')]), []);
  assert.deepEqual(fired([req('9007199254740993')], [res('9007199254740993'), res('9.007199254740993e15')]), ['/response/1/id']);
});

test('1, 1.0 and 1e0 are one id; 1 and "1" are two', () => {
  assert.deepEqual(fired([req('1'), req('2')], [res('1.0'), res('1e0')]), ['/response/1/id']);
  assert.deepEqual(fired([req('1'), req('"1"')], [res('"1"'), res('1')]), []);
});

test('only a batch answer is judged; null ids are not one id', () => {
  assert.deepEqual(batchDuplicateAnswer.check(post(req('1'), res('1'))), []);
  assert.deepEqual(fired([req('1')], [res('null'), res('null')]), []);
});
