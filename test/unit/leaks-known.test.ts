// What a session made known is no leak (#26): a path, host or address the client sent in any
// request of the session (arguments, the roots it answered) or the server returned in a success
// is neither flagged nor redacted when a later failure names it; and an echo is compared without
// the punctuation and quotes around it. The two real answers enforce changed are here as they came.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { KNOWN_BOUNDS } from '../../src/config/defaults.ts';
import { SessionStore } from '../../src/exchange/sessions.ts';
import { knownValues } from '../../src/rules/known-values.ts';
import { findLeaks } from '../../src/rules/leaks.ts';
import { call, ENFORCE, engineUnder, exchangesOf, rulesOf, SID } from '../helpers/engine-driver.ts';

const result = (id: number, text: string, isError = false) =>
  JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }], ...(isError ? { isError: true } : {}) } });

/** One tools/call through an engine under enforce.yaml: the rules that fired and what the client gets. */
function callThrough(t: ReturnType<typeof engineUnder>, id: number, tool: string, args: unknown, answer: string) {
  const { x, plan } = t.post(call(id, tool, args));
  plan.judged();
  const body = t.json(x, 200, answer);
  const [done] = exchangesOf(body.judged());
  assert.ok(done, `call ${id} judged`);
  return { rules: rulesOf(done.judged), decision: done.judged.decision.kind };
}

describe('knownValues', () => {
  test('paths, file URIs, hosts and addresses, bare; never a stack trace; credentials masked', () => {
    assert.deepEqual(knownValues({ content: [{ type: 'text', text: 'Allowed directories:\n/tmp/warden-root\n/home/ada/project' }] }), [
      '/tmp/warden-root',
      '/home/ada/project',
    ]);
    assert.deepEqual(knownValues({ roots: [{ uri: 'file:///home/ada/my%20project', name: 'p' }, { uri: 'file:///C:/work/app' }] }), [
      '/home/ada/my project',
      'C:/work/app',
    ]);
    assert.deepEqual(knownValues({ path: "'/srv/data/x.csv'." }), ['/srv/data/x.csv']);
    assert.ok(knownValues({ text: 'connected to db-primary.internal at 10.0.3.7:5432' }).includes('10.0.3.7:5432'));
    assert.ok(knownValues({ text: 'connected to db-primary.internal at 10.0.3.7:5432' }).includes('db-primary.internal'));
    const trace = knownValues({ text: 'Error: boom\n    at handler (/srv/app/dist/tools.js:42:17)' });
    assert.ok(!trace.some((v) => v.startsWith('at ')), 'no stack frame is kept');
    // Every kind of token a success can name passes the scan's cheap gate; prose without one yields nothing.
    for (const [text, token] of [
      ['replica at fd12:3456::7 is up', 'fd12:3456::7'],
      ['db jdbc:postgresql://db.internal/app', 'jdbc:postgresql://db.internal/app'],
      ['Server=sql.corp;Database=app;User ID=ada', 'Server=sql.corp;Database=app;User ID=ada'],
      ['opened C:\\work\\app\\notes.md', 'C:\\work\\app\\notes.md'],
      ['peer 192.168.1.20 answered', '192.168.1.20'],
    ] as const)
      assert.ok(knownValues({ text }).includes(token), `${token} in ${JSON.stringify(knownValues({ text }))}`);
    assert.deepEqual(knownValues({ text: 'Sunny, 21 °C in Paris. Wind 3.4 m/s from the north-west.' }), []);
    const dsn = knownValues({ dsn: 'postgres://admin:hunter2@db.internal:5432/app' });
    assert.ok(dsn.length > 0 && dsn.every((v) => !v.includes('hunter2')), JSON.stringify(dsn));
  });

  test('bounded: at most KNOWN_BOUNDS.values per message, each at most KNOWN_BOUNDS.chars, from the first KNOWN_BOUNDS.scanChars', () => {
    const many = Array.from({ length: 1000 }, (_, i) => `/home/ada/f${i}`).join('\n');
    assert.ok(knownValues({ text: many }).length <= KNOWN_BOUNDS.values);
    assert.deepEqual(knownValues({ text: `/home/${'a'.repeat(KNOWN_BOUNDS.chars + 10)}` }), []);
    assert.deepEqual(knownValues({ text: `${' '.repeat(KNOWN_BOUNDS.scanChars)} /home/ada/late` }), []);
  });

  test("a session keeps the last KNOWN_BOUNDS.values, each once; a peer's fact never stores a session", () => {
    const store = new SessionStore({ maxSessions: 10, sessionIdleMs: 60_000, maxToolsPerSession: 10 });
    const s = store.open('sid:a', 'a', 0);
    store.learn({ kind: 'known', key: 'sid:a', values: ['/a/1', '/a/2'] }, 0);
    store.learn({ kind: 'known', key: 'sid:a', values: ['/a/2', '/a/3'] }, 0);
    assert.deepEqual(s.known, ['/a/1', '/a/2', '/a/3']);
    store.learn({ kind: 'known', key: 'sid:a', values: Array.from({ length: KNOWN_BOUNDS.values }, (_, i) => `/b/${i}`) }, 0);
    assert.equal(s.known?.length, KNOWN_BOUNDS.values);
    assert.equal(s.known?.[0], '/b/0', 'the oldest went first');
    store.learn({ kind: 'known', key: 'sid:unknown', values: ['/x/y'] }, 0, undefined, true);
    assert.equal(store.find('sid:unknown', 0), undefined);
  });
});

describe('an echo is compared bare', () => {
  // mcp-server-git, as it answered through enforce: the client's own path, then a full stop.
  const gitAnswer = "fatal: not a git repository (or any of the parent directories): '/tmp/warden-repo/does-not-exist'.";
  test('the git server: a path the client sent, quoted and followed by a full stop, is an echo', () => {
    assert.deepEqual(
      findLeaks('not a git repository: /tmp/warden-repo/does-not-exist.', { sent: ['/tmp/warden-repo/does-not-exist'] }),
      [],
    );
    assert.deepEqual(findLeaks(gitAnswer, { sent: ['/tmp/warden-repo/does-not-exist'] }), []);
    assert.deepEqual(findLeaks('cannot open /tmp/warden-repo/x.', { sent: ['"/tmp/warden-repo".'] }), [], 'under a path it sent, quoted');
    assert.equal(findLeaks('cannot open /tmp/other/x.', { sent: ['/tmp/warden-repo'] }).length, 1, 'another path still leaks');
  });

  test('generated: an echo with any punctuation or quotes around it is never a leak; a sibling path always is', () => {
    const seg = fc.stringMatching(/^[a-z][a-z0-9_-]{0,11}$/);
    const root = fc.constantFrom('home', 'srv', 'var', 'opt', 'tmp', 'Users');
    fc.assert(
      fc.property(
        root,
        fc.array(seg, { minLength: 1, maxLength: 4 }),
        fc.constantFrom('', '"', "'", '`'),
        fc.constantFrom('', '.', ',', ';', '!', '?', ').', '.)'),
        fc.constantFrom('', '"', "'"),
        (r, segs, quote, after, sentQuote) => {
          const path = `/${r}/${segs.join('/')}`;
          const text = `failed (${quote}${path}${quote}${after} retry later`;
          assert.deepEqual(findLeaks(text, { sent: [`${sentQuote}${path}${sentQuote}`] }), [], text);
          const sibling = `/${r}/${segs.join('/')}-other`;
          assert.ok(findLeaks(`failed ${sibling}${after}`, { sent: [path] }).length > 0, sibling);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('the session made it known: a later failure naming it is no leak (enforce.yaml, through the engine)', () => {
  // @modelcontextprotocol/server-filesystem, as it answered through enforce: ROOT is the directory
  // the client configured, and list_allowed_directories named it in a success before.
  const denied = 'Access denied - path outside allowed directories: /etc/passwd not in /tmp/warden-root';

  test('the root a success named (list_allowed_directories) is neither flagged nor redacted', () => {
    const t = engineUnder(ENFORCE);
    callThrough(t, 1, 'list_allowed_directories', {}, result(1, 'Allowed directories:\n/tmp/warden-root'));
    const read = callThrough(t, 2, 'read_file', { path: '/etc/passwd' }, result(2, denied, true));
    assert.deepEqual(read.rules, []);
    assert.equal(read.decision, 'pass');
  });

  test('without it, the same answer names a path the session never saw: flagged and redacted, as before', () => {
    const t = engineUnder(ENFORCE);
    const read = callThrough(t, 2, 'read_file', { path: '/etc/passwd' }, result(2, denied, true));
    assert.deepEqual(read.rules, ['leaked-path']);
    assert.equal(read.decision, 'mutate');
  });

  test('a directory the client sent in an earlier request covers the paths under it', () => {
    const t = engineUnder(ENFORCE);
    callThrough(t, 1, 'open_project', { directory: '/home/ada/project' }, result(1, 'opened'));
    const write = callThrough(
      t,
      2,
      'write_file',
      { name: 'notes.md' },
      result(2, 'cannot write /home/ada/project/notes.md: read-only', true),
    );
    assert.deepEqual(write.rules, []);
  });

  test("a failure's own names never make themselves known: the same leak twice is flagged twice", () => {
    const t = engineUnder(ENFORCE);
    const leak = 'cannot open /srv/secret/app.db';
    assert.deepEqual(callThrough(t, 1, 'read', {}, result(1, leak, true)).rules, ['leaked-path']);
    assert.deepEqual(callThrough(t, 2, 'read', {}, result(2, leak, true)).rules, ['leaked-path']);
    // A result that states a failure without isError (silent-success) teaches nothing either.
    const silent = callThrough(t, 3, 'read', {}, result(3, 'Error: could not open /srv/other/app.db'));
    assert.ok(silent.rules.includes('silent-success'));
    assert.deepEqual(callThrough(t, 4, 'read', {}, result(4, 'cannot open /srv/other/app.db', true)).rules, ['leaked-path']);
  });

  test('what one session made known is not known to another', () => {
    const t = engineUnder(ENFORCE);
    callThrough(t, 1, 'list_allowed_directories', {}, result(1, 'Allowed directories:\n/tmp/warden-root'));
    const other = t.engine.sessions.open('sid:other', 'other', 0);
    assert.equal(other.known, undefined);
    assert.deepEqual(t.engine.sessions.find(`sid:${SID}`, 0)?.known, ['/tmp/warden-root']);
  });
});
