import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { SessionStore, sessionKey, type SessionLimits } from '../../src/exchange/sessions.ts';

const LIMITS: SessionLimits = { maxSessions: 100, sessionIdleMs: 60_000, maxToolsPerSession: 1000 };
const store = (limits: Partial<SessionLimits> = {}) => new SessionStore({ ...LIMITS, ...limits });

describe('sessionKey', () => {
  test('a session id wins over the credential', () => {
    assert.equal(sessionKey('abc', 'Bearer t1'), 'sid:abc');
    assert.equal(sessionKey('abc', 'Bearer t2'), sessionKey('abc', undefined));
  });

  test('without a session id, the same credential gives the same key', () => {
    assert.equal(sessionKey(undefined, 'Bearer token-1'), sessionKey(undefined, 'Bearer token-1'));
    assert.equal(sessionKey(undefined, undefined), sessionKey(undefined, undefined));
  });

  test('without a session id, different credentials give different keys', () => {
    const keys = new Set(
      ['Bearer token-1', 'Bearer token-2', 'Basic dXNlcjpwYXNz', 'bearer token-1', 'Bearer token-1 '].map((a) => sessionKey(undefined, a)),
    );
    assert.equal(keys.size, 5);
    assert.notEqual(sessionKey(undefined, 'Bearer x'), sessionKey(undefined, undefined));
  });

  test('an anonymous key never contains the credential and cannot collide with a session key', () => {
    for (const auth of ['Bearer eyJhbGciOiJIUzI1NiJ9.secret-payload.sig', 'Basic dXNlcjpwYXNzd29yZA==', 'sk-live-0123456789abcdef']) {
      const key = sessionKey(undefined, auth);
      assert.ok(!key.includes(auth));
      for (const part of auth.split(/[\s.]+/).filter((p) => p.length >= 6)) assert.ok(!key.includes(part), `${key} contains ${part}`);
      assert.ok(!key.startsWith('sid:'));
    }
  });

  test('the key of a session id is not a digest of anything (sessions are found by their id)', () => {
    assert.equal(sessionKey('7f3c-11', undefined), 'sid:7f3c-11');
  });
});

describe('SessionStore open/find/end/sweep', () => {
  test('open creates an empty session, and the same one comes back on reopen', () => {
    const s = store();
    const a = s.open('sid:a', 'a', 0);
    assert.equal(a.key, 'sid:a');
    assert.equal(a.sessionId, 'a');
    assert.equal(a.protocolVersion, undefined);
    assert.equal(a.era, undefined);
    assert.equal(a.serverCapabilities, undefined);
    assert.equal(a.clientCapabilities, undefined);
    assert.equal(a.tools.size, 0);
    assert.equal(a.toolsComplete, false);
    assert.equal(s.size, 1);
    assert.equal(s.open('sid:a', 'a', 1), a);
    assert.equal(s.size, 1);
  });

  test('an anonymous session has no session id', () => {
    const s = store();
    const key = sessionKey(undefined, 'Bearer x');
    const session = s.open(key, undefined, 0);
    assert.equal(session.key, key);
    assert.equal(session.sessionId, undefined);
  });

  test('find returns the session, or undefined without creating one', () => {
    const s = store();
    const a = s.open('sid:a', 'a', 0);
    assert.equal(s.find('sid:a', 1), a);
    assert.equal(s.find('sid:b', 1), undefined);
    assert.equal(s.size, 1);
  });

  test('end removes the session; opening it again gives a fresh one', () => {
    const s = store();
    const a = s.open('sid:a', 'a', 0);
    s.setVersion(a, '2025-06-18');
    s.end('sid:a');
    assert.equal(s.find('sid:a', 1), undefined);
    assert.equal(s.size, 0);
    const again = s.open('sid:a', 'a', 2);
    assert.notEqual(again, a);
    assert.equal(again.protocolVersion, undefined);
    s.end('sid:unknown');
    assert.equal(s.size, 1);
  });

  test('sweep ends idle sessions only; find and open keep a session alive', () => {
    const s = store({ sessionIdleMs: 1000 });
    s.open('sid:a', 'a', 0);
    s.open('sid:b', 'b', 0);
    s.open('sid:c', 'c', 0);
    s.find('sid:b', 800);
    s.open('sid:c', 'c', 900);
    s.sweep(1500);
    assert.equal(s.find('sid:a', 1500), undefined);
    assert.ok(s.find('sid:b', 1500));
    assert.ok(s.find('sid:c', 1500));
  });

  test('past maxSessions the least recently used session is dropped', () => {
    const s = store({ maxSessions: 2 });
    s.open('sid:a', 'a', 0);
    s.open('sid:b', 'b', 1);
    s.find('sid:a', 2);
    s.open('sid:c', 'c', 3);
    assert.equal(s.size, 2);
    assert.ok(s.find('sid:a', 4));
    assert.equal(s.find('sid:b', 4), undefined);
    assert.ok(s.find('sid:c', 4));
  });
});

describe('SessionStore.setVersion', () => {
  // A version string nobody defined has no era (it does not sort into one; issue 11).
  const cases: Array<[string, 'legacy' | 'modern' | undefined]> = [
    ['2024-11-05', 'legacy'],
    ['2025-03-26', 'legacy'],
    ['2025-06-18', 'legacy'],
    ['2025-11-25', 'legacy'],
    ['2026-07-28', 'modern'],
    ['2027-01-01', undefined],
    ['2024-01-01', undefined],
  ];
  for (const [version, era] of cases) {
    test(`${version} → ${era}`, () => {
      const s = store();
      const session = s.open('sid:a', 'a', 0);
      s.setVersion(session, version);
      assert.equal(session.protocolVersion, version);
      assert.equal(session.era, era);
    });
  }

  test('a later version replaces the earlier one and its era', () => {
    const s = store();
    const session = s.open('k', undefined, 0);
    s.setVersion(session, '2025-06-18');
    s.setVersion(session, '2026-07-28');
    assert.equal(session.protocolVersion, '2026-07-28');
    assert.equal(session.era, 'modern');
  });
});

describe('SessionStore.addTools', () => {
  const names = (tools: ReadonlyMap<string, unknown>) => [...tools.keys()];

  test('the first page replaces the catalogue, later pages append', () => {
    const s = store();
    const session = s.open('k', undefined, 0);
    s.addTools(session, [{ name: 'old', inputSchema: {} }], true, true);
    s.addTools(session, [{ name: 'a', inputSchema: { type: 'object' } }, { name: 'b' }], true, false);
    assert.deepEqual(names(session.tools), ['a', 'b']);
    s.addTools(session, [{ name: 'c', inputSchema: { type: 'object', properties: { x: {} } } }], false, true);
    assert.deepEqual(names(session.tools), ['a', 'b', 'c']);
    assert.deepEqual(session.tools.get('a')?.inputSchema, { type: 'object' });
    assert.equal(session.tools.get('b')?.inputSchema, undefined);
    assert.deepEqual(session.tools.get('c')?.inputSchema, { type: 'object', properties: { x: {} } });
  });

  test('extra tool fields are kept only as digests (for drift); a repeated name keeps the latest schema', () => {
    const s = store();
    const session = s.open('k', undefined, 0);
    s.addTools(session, [{ name: 'a', description: 'd', annotations: {}, inputSchema: { v: 1 } }], true, false);
    s.addTools(session, [{ name: 'a', inputSchema: { v: 2 }, outputSchema: { type: 'object' } }], false, true);
    const a = session.tools.get('a')!;
    assert.deepEqual([a.name, a.inputSchema, a.outputSchema], ['a', { v: 2 }, { type: 'object' }]);
    assert.deepEqual(Object.keys(a.fields ?? {}).sort(), ['inputSchema', 'name', 'outputSchema']);
    assert.ok(
      Object.values(a.fields ?? {}).every((d) => /^[\w-]{12}$/.test(d)),
      'digests, not the values',
    );
    assert.equal(session.tools.size, 1);
  });

  test('the previous complete catalogue is kept for one list, with whether a change was announced', () => {
    const s = store();
    const session = s.open('k', undefined, 0);
    s.addTools(session, [{ name: 'a', inputSchema: {} }], true, true);
    const first = session.tools.get('a')!.fields;
    s.addTools(session, [{ name: 'b', inputSchema: {} }], true, true);
    assert.deepEqual([...session.previousTools!], [['a', first]]);
    assert.equal(session.listAnnounced, false);
    session.toolsChangeAnnounced = true;
    s.addTools(session, [{ name: 'c', inputSchema: {} }], true, true);
    assert.equal(session.listAnnounced, true);
  });

  test('junk entries are skipped', () => {
    const s = store();
    const session = s.open('k', undefined, 0);
    s.addTools(
      session,
      [null, 'echo', 42, true, [], {}, { name: 5 }, { name: null }, { title: 'x' }, { name: 'ok' }, [{ name: 'nested' }]],
      true,
      true,
    );
    assert.deepEqual(names(session.tools), ['ok']);
  });

  test('a tools value that is not an array adds nothing, but a first page still clears', () => {
    const s = store();
    const session = s.open('k', undefined, 0);
    s.addTools(session, [{ name: 'a' }], true, true);
    for (const junk of [undefined, null, {}, 'tools', { name: 'x' }]) s.addTools(session, junk, false, true);
    assert.deepEqual(names(session.tools), ['a']);
    s.addTools(session, undefined, true, true);
    assert.equal(session.tools.size, 0);
  });

  test('the catalogue stops at maxToolsPerSession, across pages', () => {
    const s = store({ maxToolsPerSession: 3 });
    const session = s.open('k', undefined, 0);
    s.addTools(session, [{ name: 't1' }, { name: 't2' }], true, false);
    s.addTools(session, [{ name: 't3' }, { name: 't4' }, { name: 't5' }], false, false);
    assert.deepEqual(names(session.tools), ['t1', 't2', 't3']);
    s.addTools(session, [{ name: 't6' }], false, true);
    assert.equal(session.tools.size, 3);
    // a new first page starts counting again
    s.addTools(session, [{ name: 'u1' }, { name: 'u2' }, { name: 'u3' }, { name: 'u4' }], true, true);
    assert.deepEqual(names(session.tools), ['u1', 'u2', 'u3']);
  });

  test('junk does not count towards the bound', () => {
    const s = store({ maxToolsPerSession: 2 });
    const session = s.open('k', undefined, 0);
    s.addTools(session, [null, {}, { name: 'a' }, 7, { name: 'b' }, { name: 'c' }], true, true);
    assert.deepEqual(names(session.tools), ['a', 'b']);
  });

  test('catalogues of different sessions are separate', () => {
    const s = store();
    const a = s.open('sid:a', 'a', 0);
    const b = s.open('sid:b', 'b', 0);
    s.addTools(a, [{ name: 'only-a' }], true, true);
    assert.equal(b.tools.size, 0);
  });
});

describe('SessionStore.addTools: toolsComplete', () => {
  test('a single page (first and last) is complete', () => {
    const s = store();
    const session = s.open('k', undefined, 0);
    assert.equal(session.toolsComplete, false);
    s.addTools(session, [{ name: 'a' }], true, true);
    assert.equal(session.toolsComplete, true);
  });

  test('an empty single page is a complete, empty catalogue', () => {
    const s = store();
    const session = s.open('k', undefined, 0);
    s.addTools(session, [], true, true);
    assert.equal(session.toolsComplete, true);
    assert.equal(session.tools.size, 0);
  });

  test('complete only once the last of several pages arrived', () => {
    const s = store();
    const session = s.open('k', undefined, 0);
    s.addTools(session, [{ name: 'a' }], true, false);
    assert.equal(session.toolsComplete, false);
    s.addTools(session, [{ name: 'b' }], false, false);
    assert.equal(session.toolsComplete, false);
    s.addTools(session, [{ name: 'c' }], false, true);
    assert.equal(session.toolsComplete, true);
  });

  test('a new first page that is not the last makes the catalogue incomplete again', () => {
    const s = store();
    const session = s.open('k', undefined, 0);
    s.addTools(session, [{ name: 'a' }], true, true);
    s.addTools(session, [{ name: 'x' }], true, false);
    assert.equal(session.toolsComplete, false);
    assert.deepEqual([...session.tools.keys()], ['x']);
  });

  test('a last page without any first page seen is not complete', () => {
    const s = store();
    const session = s.open('k', undefined, 0);
    s.addTools(session, [{ name: 'late' }], false, true);
    assert.equal(session.toolsComplete, false);
    assert.deepEqual([...session.tools.keys()], ['late']);
  });

  test('an empty first page with a cursor, then the last page, is complete', {}, () => {
    const s = store();
    const session = s.open('k', undefined, 0);
    s.addTools(session, [], true, false);
    s.addTools(session, [{ name: 'a' }], false, true);
    assert.equal(session.toolsComplete, true);
  });
});

describe('shared tool catalogues', () => {
  const schema = (n: number) => ({ type: 'object', properties: { [`p${n}`]: { type: 'string', description: 'x'.repeat(200) } } });
  const toolList = (prefix: string, n = 20) => Array.from({ length: n }, (_, i) => ({ name: `${prefix}${i}`, inputSchema: schema(i) }));

  test('sessions that list the same tools share one catalogue, counted once', () => {
    const s = store();
    const sessions = Array.from({ length: 100 }, (_, i) => s.open(`sid:${i}`, String(i), 0));
    for (const session of sessions) s.addTools(session, toolList('t'), true, true);
    assert.equal(s.catalogueStats.catalogues, 1);
    assert.ok(sessions.every((x) => x.tools === sessions[0]!.tools && x.toolsComplete && x.tools.has('t7')));
    const one = s.catalogueStats.bytes;
    s.addTools(sessions[0]!, toolList('other'), true, true);
    assert.equal(s.catalogueStats.catalogues, 2);
    assert.ok(sessions[0]!.tools.has('other3') && !sessions[1]!.tools.has('other3'), 'a new list never edits the shared one');
    assert.ok(s.catalogueStats.bytes > one);
  });

  test('past the byte bound the least recently listed catalogue is dropped and its sessions forget their tools', () => {
    const dropped: Array<{ tools: number; sessions: number; bytes: number }> = [];
    const s = new SessionStore({ ...LIMITS, maxCatalogueBytes: 20_000 }, (d) => dropped.push(d));
    const a = s.open('sid:a', 'a', 0);
    const a2 = s.open('sid:a2', 'a2', 0);
    s.addTools(a, toolList('a'), true, true);
    s.addTools(a2, toolList('a'), true, true);
    const b = s.open('sid:b', 'b', 0);
    s.addTools(b, toolList('b', 60), true, true);
    assert.deepEqual(
      dropped.map((d) => [d.tools, d.sessions]),
      [[20, 2]],
    );
    assert.ok(dropped[0]!.bytes > 5_000);
    assert.deepEqual(s.catalogueStats.catalogues, 1);
    for (const x of [a, a2]) {
      assert.equal(x.tools.size, 0);
      assert.equal(x.toolsComplete, false, 'an incomplete catalogue can never say a tool is unknown');
    }
    assert.ok(b.toolsComplete && b.tools.has('b59'));
  });

  test('a catalogue no session holds any more is released', () => {
    const s = store({ maxSessions: 1 });
    s.addTools(s.open('sid:a', 'a', 0), toolList('a'), true, true);
    assert.equal(s.catalogueStats.catalogues, 1);
    s.open('sid:b', 'b', 1); // evicts a
    assert.equal(s.catalogueStats.catalogues, 0);
    const c = s.open('sid:c', 'c', 2);
    s.addTools(c, toolList('c'), true, true);
    s.end('sid:c');
    assert.deepEqual(s.catalogueStats, { catalogues: 0, bytes: 0 });
  });
});
