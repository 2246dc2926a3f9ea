// LegacySessions (src/transport/legacy-sse.ts): the legacy HTTP+SSE transport's sessions, learned
// from the `endpoint` event of a GET stream, and the POSTs routed to them by their request target.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TRANSPORT_MODES, type TransportMode } from '../../src/mcp/transport-modes.ts';
import { LegacySessions } from '../../src/transport/legacy-sse.ts';

const UPSTREAM = new URL('http://upstream.test:3001/sse');
const PUBLIC = 'https://proxy.example';

const sessions = (mode: TransportMode = 'auto', max = 16) => new LegacySessions(mode, '/sse', max);

describe('LegacySessions.learn', () => {
  test('a relative endpoint goes to the client as it came (it resolves to the proxy); via names the session', () => {
    const s = sessions();
    const learned = s.learn('/message?sessionId=abc', UPSTREAM, PUBLIC, 0);
    assert.ok(learned);
    assert.equal(learned.data, '/message?sessionId=abc');
    assert.equal(learned.session.upstreamTarget, '/message?sessionId=abc');
    assert.equal(learned.session.via.wire, 'sse');
    assert.equal(learned.session.via.sessionId, 'abc');
  });

  test('an absolute endpoint on the upstream origin is learned the same way', () => {
    const s = sessions();
    const learned = s.learn('http://upstream.test:3001/message?sessionId=abc', UPSTREAM, PUBLIC, 0);
    assert.equal(learned?.data, `${PUBLIC}/message?sessionId=abc`);
    assert.equal(learned?.session.via.sessionId, 'abc');
    assert.equal(learned?.session.via.wire, 'sse');
  });

  test('whitespace around the data is not part of the URL (the session); the data goes on as it came', () => {
    const learned = sessions().learn('  /message?sessionId=abc\n', UPSTREAM, PUBLIC, 0);
    assert.equal(learned?.session.upstreamTarget, '/message?sessionId=abc');
    assert.equal(learned?.data, '  /message?sessionId=abc\n');
  });

  test("the Python SDK's session_id is a session id too", () => {
    const learned = sessions().learn('/messages/?session_id=0f3e', UPSTREAM, PUBLIC, 0);
    assert.equal(learned?.data, '/messages/?session_id=0f3e');
    assert.equal(learned?.session.via.sessionId, '0f3e');
  });

  test('an endpoint without a session parameter is named by its path and query', () => {
    const learned = sessions().learn('/rpc/42', UPSTREAM, PUBLIC, 0);
    assert.equal(learned?.session.via.sessionId, '/rpc/42');
    assert.equal(learned?.data, '/rpc/42');
  });

  test('a relative path without a leading slash resolves against the stream URL', () => {
    const learned = sessions().learn('message?sessionId=1', new URL('http://upstream.test:3001/base/sse'), PUBLIC, 0);
    assert.equal(learned?.session.upstreamTarget, '/base/message?sessionId=1');
  });

  test('another origin (host, port or scheme), or a protocol-relative URL to one: not learned', () => {
    const s = sessions();
    for (const data of [
      'http://elsewhere.test:3001/message?sessionId=abc',
      'http://upstream.test:3002/message?sessionId=abc',
      'https://upstream.test:3001/message?sessionId=abc',
      '//elsewhere.test/message?sessionId=abc',
    ])
      assert.equal(s.learn(data, UPSTREAM, PUBLIC, 0), undefined, data);
    assert.equal(s.isMessagePath('/message?sessionId=abc'), false, 'nothing learned from them');
  });

  test('data that is no URL: not learned', () => {
    assert.equal(sessions().learn('http://[bad', UPSTREAM, PUBLIC, 0), undefined);
  });

  test('streamable-http mode learns nothing; auto and sse do', () => {
    assert.deepEqual(TRANSPORT_MODES, ['auto', 'sse', 'streamable-http']);
    const s = sessions('streamable-http');
    assert.equal(s.learn('/message?sessionId=abc', UPSTREAM, PUBLIC, 0), undefined);
    assert.equal(s.lookup('/message?sessionId=abc', 0), undefined);
    for (const mode of ['auto', 'sse'] as const) assert.ok(sessions(mode).learn('/message?sessionId=abc', UPSTREAM, PUBLIC, 0), mode);
  });
});

describe('LegacySessions.lookup', () => {
  const learned = (mode: TransportMode = 'auto', max = 16) => {
    const s = sessions(mode, max);
    const l = s.learn('/message?sessionId=abc', UPSTREAM, PUBLIC, 0);
    assert.ok(l);
    return { s, session: l.session };
  };

  test('a POST to the learned target finds its session', () => {
    const { s, session } = learned();
    assert.equal(s.isMessagePath('/message?sessionId=abc'), true);
    assert.equal(s.lookup('/message?sessionId=abc', 1), session);
  });

  test('the same target in absolute form finds it too', () => {
    const { s, session } = learned();
    assert.equal(s.lookup('http://proxy.example/message?sessionId=abc', 1), session);
  });

  test('another session on a learned message path: unknown', () => {
    const { s } = learned();
    assert.equal(s.lookup('/message?sessionId=zzz', 1), 'unknown');
    assert.equal(s.lookup('/message', 1), 'unknown');
  });

  test('an unrelated path: not legacy traffic (undefined)', () => {
    const { s } = learned();
    assert.equal(s.isMessagePath('/other?sessionId=abc'), false);
    assert.equal(s.lookup('/other?sessionId=abc', 1), undefined);
    assert.equal(s.lookup('/messages?sessionId=abc', 1), undefined);
  });

  test('another spelling of the path (case, trailing slash, //, ;params, percent-escapes) is legacy traffic of no session: unknown', () => {
    const { s } = learned();
    for (const target of [
      '/MESSAGE?sessionId=abc',
      '/message/?sessionId=abc',
      '//message?sessionId=abc',
      '/message;v=1?sessionId=abc',
      '/%6Dessage?sessionId=abc',
      '/x/../message?sessionId=abc',
    ]) {
      assert.equal(s.isMessagePath(target), true, target);
      assert.equal(s.lookup(target, 1), 'unknown', target);
    }
  });

  test('the query is compared as it came: another spelling of it is another session', () => {
    const { s } = learned();
    for (const target of ['/message?sessionid=abc', '/message?sessionId=ABC', '/message?sessionId=abc&x=1', '/message?sessionId=%61bc'])
      assert.equal(s.lookup(target, 1), 'unknown', target);
  });

  test('sse mode: a POST to the endpoint path with no known session is unknown, even with nothing learned', () => {
    const s = sessions('sse');
    assert.equal(s.isMessagePath('/sse'), true);
    assert.equal(s.lookup('/sse', 0), 'unknown');
    assert.equal(s.lookup('/SSE/?sessionId=1', 0), 'unknown');
    assert.equal(s.lookup('/elsewhere', 0), undefined);
  });

  test('auto mode with nothing learned: no path is legacy', () => {
    const s = sessions('auto');
    assert.equal(s.isMessagePath('/sse'), false);
    assert.equal(s.lookup('/sse', 0), undefined);
    assert.equal(s.lookup('/message?sessionId=abc', 0), undefined);
  });

  test("auto mode, a session learned on the endpoint's own path: a POST there without it is Streamable HTTP (undefined)", () => {
    const s = sessions('auto');
    const l = s.learn('/sse?sessionId=abc', UPSTREAM, PUBLIC, 0);
    assert.ok(l);
    assert.equal(s.lookup('/sse?sessionId=abc', 1), l.session);
    assert.equal(s.lookup('/sse', 1), undefined);
    assert.equal(s.lookup('/sse?sessionId=other', 1), undefined);
    // Under sse mode the same POSTs are legacy traffic of an unknown session.
    const strict = sessions('sse');
    strict.learn('/sse?sessionId=abc', UPSTREAM, PUBLIC, 0);
    assert.equal(strict.lookup('/sse', 1), 'unknown');
  });

  test('end(): the session is forgotten, its POSTs are unknown from then on; other sessions stay', () => {
    const { s, session } = learned();
    const other = s.learn('/message?sessionId=def', UPSTREAM, PUBLIC, 0);
    assert.ok(other);
    s.end(session);
    assert.equal(s.lookup('/message?sessionId=abc', 1), 'unknown');
    assert.equal(s.lookup('/message?sessionId=def', 1), other.session);
  });

  test('end() of a session another stream has learned again since: the newer session stays', () => {
    const s = sessions();
    const first = s.learn('/message', UPSTREAM, PUBLIC, 0);
    const second = s.learn('/message', UPSTREAM, PUBLIC, 1);
    assert.ok(first && second && first.session !== second.session);
    s.end(first.session);
    assert.equal(s.lookup('/message', 2), second.session);
  });

  test('two sessions whose ids in the path differ only in case stay two sessions', () => {
    const s = sessions();
    const a = s.learn('/messages/AbC', UPSTREAM, PUBLIC, 0)!;
    const b = s.learn('/messages/aBc', UPSTREAM, PUBLIC, 1)!;
    assert.equal(s.lookup('/messages/aBc', 2), b.session);
    assert.equal(s.lookup('/messages/AbC', 2), a.session);
  });

  test('capacity: past maxSessions the least recently used session is forgotten (unknown)', () => {
    const s = sessions('auto', 2);
    const a = s.learn('/message?sessionId=a', UPSTREAM, PUBLIC, 0)!;
    const b = s.learn('/message?sessionId=b', UPSTREAM, PUBLIC, 1)!;
    assert.equal(s.lookup('/message?sessionId=a', 2), a.session, 'a used: b is now the oldest');
    const c = s.learn('/message?sessionId=c', UPSTREAM, PUBLIC, 3)!;
    assert.equal(s.lookup('/message?sessionId=b', 4), 'unknown');
    assert.equal(s.lookup('/message?sessionId=a', 4), a.session);
    assert.equal(s.lookup('/message?sessionId=c', 4), c.session);
    assert.notEqual(b.session, c.session);
  });

  test('learning the same endpoint again replaces its session without taking another place', () => {
    const s = sessions('auto', 2);
    s.learn('/message?sessionId=a', UPSTREAM, PUBLIC, 0);
    s.learn('/message?sessionId=b', UPSTREAM, PUBLIC, 1);
    const again = s.learn('/message?sessionId=b', UPSTREAM, PUBLIC, 2)!;
    assert.notEqual(s.lookup('/message?sessionId=a', 3), 'unknown');
    assert.equal(s.lookup('/message?sessionId=b', 3), again.session);
  });
});
