// shareSessions (state/shared.ts) with a store that has facts to read: a session first heard of
// through a page of its catalogue (its initialize went out before this process listened) is read
// from the store at its next request; a session heard of from its start, or known here, is not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type SessionFact, SessionStore } from '../../src/exchange/sessions.ts';
import { shareSessions, type SharedSessions } from '../../src/state/shared.ts';

/** `failing`: how many reads fail (the store slow or away) before they answer. */
function setup(stored: readonly SessionFact[], failing = 0) {
  const sessions = new SessionStore({ maxSessions: 100, sessionIdleMs: 600_000, maxToolsPerSession: 1000 });
  const reads: string[] = [];
  const store: SharedSessions = {
    publish() {},
    recall: async (key) => {
      reads.push(key);
      return reads.length <= failing ? undefined : stored.filter((f) => f.key === key);
    },
    onFact: () => {},
    onGap: () => {},
    onUsedElsewhere: () => {},
    used: () => [],
    close: async () => {},
  };
  const before = shareSessions(sessions, store, () => 0)!;
  return { sessions, store, reads, before };
}

const init = (key: string): SessionFact => ({
  kind: 'initialized',
  key,
  sessionId: key,
  version: '2025-11-25',
  serverCapabilities: { tools: {} },
  clientCapabilities: {},
  clientInfo: undefined,
});
const page = (key: string): SessionFact => ({
  kind: 'tools',
  key,
  sessionId: key,
  tools: [{ name: 'a', inputSchema: { type: 'object' } }],
  firstPage: true,
  lastPage: true,
});

test('a session first heard of by a catalogue page is read from the store at its next request, once', async () => {
  const { sessions, store, reads, before } = setup([init('s1'), page('s1')]);
  store.onFact(page('s1'));
  assert.equal(sessions.find('s1', 0)?.serverCapabilities, undefined, 'known without its start');
  await before('s1');
  assert.deepEqual(reads, ['s1']);
  assert.deepEqual(sessions.find('s1', 0)?.serverCapabilities, { tools: {} }, 'its initialize read');
  await before('s1');
  assert.deepEqual(reads, ['s1'], 'not read again');
});

test('a session heard of from its start, or known here before its page, is not read again', async () => {
  const { store, reads, before } = setup([]);
  store.onFact(init('s2'));
  store.onFact(page('s2'));
  await before('s2');
  assert.deepEqual(reads, []);
});

test('a read that fails leaves the session marked: it is read again at its next request', async () => {
  const { sessions, store, reads, before } = setup([init('s3'), page('s3')], 1);
  store.onFact(page('s3'));
  await before('s3');
  assert.equal(sessions.find('s3', 0)?.serverCapabilities, undefined, 'the read failed');
  await before('s3');
  assert.deepEqual(reads, ['s3', 's3']);
  assert.deepEqual(sessions.find('s3', 0)?.serverCapabilities, { tools: {} });
});

test("a session's end drops its mark", async () => {
  const { store, reads, before } = setup([]);
  store.onFact(page('s4'));
  store.onFact({ kind: 'ended', key: 's4' });
  store.onFact(init('s4'));
  await before('s4');
  assert.deepEqual(reads, [], 'known from its start after the end: nothing to read');
});
