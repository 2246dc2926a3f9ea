// The rules about what a server asks of the client (src/rules/server-requests.ts), as pure
// functions: a capability the client never declared, and a client's error passed back.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { propagatedClientError, serverRequestWithoutCapability } from '../../src/rules/server-requests.ts';
import { errorMsg, resultMsg, subject } from '../helpers/subject.ts';

const V = '2025-06-18';
const refused = { method: 'sampling/createMessage', code: -32601, message: 'Method not found', at: 10 };

describe('propagated-client-error', () => {
  test("fires on the client's own error passed back while the request was open", () => {
    const s = subject({ version: V, response: errorMsg(-32601, 'Method not found'), session: { clientErrors: [refused] } });
    assert.equal(propagatedClientError.check(s).length, 1);
  });
  test('silent on the same code and words the client gave before the request began (a generic error twice)', () => {
    const s = subject({ version: V, response: errorMsg(-32601, 'Method not found'), session: { clientErrors: [refused] } });
    const later = { ...s, request: { ...s.request, startedAt: 11 } };
    assert.deepEqual(propagatedClientError.check(later), []);
  });
  test('silent on another code or message, on a result, and with no client error', () => {
    for (const response of [errorMsg(-32603, 'Method not found'), errorMsg(-32601, 'Tool echo is disabled'), resultMsg({ content: [] })])
      assert.deepEqual(propagatedClientError.check(subject({ version: V, response, session: { clientErrors: [refused] } })), []);
    assert.deepEqual(propagatedClientError.check(subject({ version: V, response: errorMsg(-32601, 'Method not found') })), []);
  });
});

describe('server-request-without-capability', () => {
  const ask = (method: string, clientCapabilities: Record<string, unknown> | undefined) =>
    serverRequestWithoutCapability.check(
      subject({ version: V, from: 'server', method, response: resultMsg({}), session: { clientCapabilities } }),
    );
  test('fires for each of sampling, elicitation and roots when the client declared capabilities without it', () => {
    for (const method of ['sampling/createMessage', 'elicitation/create', 'roots/list'])
      assert.equal(ask(method, { other: {} }).length, 1, method);
  });
  test('silent when declared, when initialize was not seen, for other methods and for client requests', () => {
    assert.deepEqual(ask('sampling/createMessage', { sampling: {} }), []);
    assert.deepEqual(ask('roots/list', undefined), []);
    assert.deepEqual(ask('ping', {}), []);
    assert.deepEqual(
      serverRequestWithoutCapability.check(
        subject({ version: V, method: 'roots/list', response: resultMsg({}), session: { clientCapabilities: {} } }),
      ),
      [],
    );
  });
});
