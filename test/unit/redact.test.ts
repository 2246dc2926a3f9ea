import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REDACTED, redactTarget } from '../../src/sinks/logger.ts';
import { loggedArguments } from '../../src/sinks/redact.ts';

const params = { name: 'login', arguments: { user: 'ada', password: 'hunter2', nested: { api_key: 'k-1', count: 3, list: [{ access_token: 't' }] } } };

test('redacted arguments keep their shape and types, never their text', () => {
  assert.deepEqual(loggedArguments(params, 'redacted'), {
    user: REDACTED,
    password: REDACTED,
    nested: { api_key: REDACTED, count: 3, list: [{ access_token: REDACTED }] },
  });
});

test('full arguments are as sent, except fields named like credentials at any depth', () => {
  assert.deepEqual(loggedArguments(params, 'full'), {
    user: 'ada',
    password: REDACTED,
    nested: { api_key: REDACTED, count: 3, list: [{ access_token: REDACTED }] },
  });
  assert.deepEqual(loggedArguments({ arguments: { Authorization: 'Bearer x', token: 'y', tokens: 2 } }, 'full'), { Authorization: REDACTED, token: REDACTED, tokens: 2 });
});

test('arguments off, or a request without arguments, log nothing', () => {
  assert.equal(loggedArguments(params, 'off'), undefined);
  assert.equal(loggedArguments({ name: 'x' }, 'full'), undefined);
  assert.equal(loggedArguments(undefined, 'redacted'), undefined);
});

test('query values named like secrets are redacted in a logged target', () => {
  assert.equal(redactTarget('/mcp?access_token=abc&lang=en'), `/mcp?access_token=${REDACTED}&lang=en`);
  assert.equal(redactTarget('/mcp'), '/mcp');
});
