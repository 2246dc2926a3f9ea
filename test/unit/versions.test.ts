// The versions table and what judges a version string nobody defined (issue 11): such a string
// has no era and selects no rule table; the era the traffic was sent in does.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isUnknownMethod, methodsOf } from '../../src/mcp/methods.ts';
import { eraOf, judgingVersion, LATEST_OF, versionInfo, VERSIONS } from '../../src/mcp/versions.ts';
import { RuleEngine } from '../../src/rules/engine.ts';
import { decodeJson } from '../../src/codec/json-body.ts';
import { RULES } from '../../src/rules/index.ts';
import { judgedVersion, sentEra } from '../../src/rules/read.ts';
import type { PostSubject } from '../../src/rules/types.ts';
import { ALL } from '../../src/rules/versions.ts';
import { errorMsg, modernMeta, session, subject } from '../helpers/subject.ts';

const UNDEFINED_VERSIONS = [
  '2027-01-01',
  '2024-01-01',
  '2026-07-28 ',
  'DRAFT-2026-v1',
  '',
  'constructor',
  '__proto__',
  'toString',
  'hasOwnProperty',
];

describe('versions.ts: a version string nobody defined', () => {
  test('has no row and no era, whatever it sorts like', () => {
    for (const v of UNDEFINED_VERSIONS) {
      assert.equal(versionInfo(v), undefined, v);
      assert.equal(eraOf(v), undefined, v);
    }
    for (const row of VERSIONS) assert.equal(eraOf(row.version), row.era);
  });

  test('is judged by the newest version of the era it was sent in, or by none', () => {
    assert.deepEqual(LATEST_OF, { legacy: '2025-11-25', modern: '2026-07-28' });
    for (const v of UNDEFINED_VERSIONS) {
      assert.equal(judgingVersion(v, 'modern'), '2026-07-28', v);
      assert.equal(judgingVersion(v, 'legacy'), '2025-11-25', v);
      assert.equal(judgingVersion(v, undefined), undefined, v);
    }
    for (const v of ALL) for (const era of ['legacy', 'modern', undefined] as const) assert.equal(judgingVersion(v, era), v);
    assert.equal(judgingVersion(undefined, 'modern'), undefined);
  });

  test('methods.ts: never reads a prototype key as a version', () => {
    for (const v of UNDEFINED_VERSIONS) {
      assert.equal(methodsOf(v), undefined, v);
      assert.doesNotThrow(() => isUnknownMethod('tools/call', v, undefined));
      assert.equal(isUnknownMethod('tools/call', v, undefined), undefined, v);
    }
    assert.equal(methodsOf('2026-07-28')?.has('server/discover'), true);
  });
});

describe('read.ts: the era a request was sent in', () => {
  const none = session();
  test('_meta protocolVersion → modern; initialize, Mcp-Session-Id or a negotiated session → legacy; the header alone → modern', () => {
    assert.equal(sentEra([{ method: 'tools/call', params: { _meta: modernMeta('2027-01-01') } }], {}, none), 'modern');
    assert.equal(sentEra([{ method: 'initialize', params: { protocolVersion: '2027-01-01' } }], {}, none), 'legacy');
    assert.equal(sentEra([{ method: 'tools/call', params: {} }], { 'mcp-session-id': 's1' }, none), 'legacy');
    assert.equal(sentEra([{ method: 'tools/call', params: {} }], {}, session({ protocolVersion: '2099-01-01' })), 'legacy');
    assert.equal(sentEra([{ method: 'tools/call', params: {} }], { 'mcp-protocol-version': '2027-01-01' }, none), 'modern');
    assert.equal(sentEra([{ method: 'tools/call', params: {} }], {}, none), undefined);
  });

  test('judgedVersion: a defined version judges itself; an undefined one its era, or a legacy session its negotiated version', () => {
    const call = [{ method: 'tools/call', params: { _meta: modernMeta('2027-01-01') } }];
    assert.equal(judgedVersion('2025-06-18', call, {}, none), '2025-06-18');
    assert.equal(judgedVersion(undefined, call, {}, none), undefined);
    assert.equal(judgedVersion('2027-01-01', call, {}, none), '2026-07-28');
    assert.equal(
      judgedVersion('2027-01-01', [{ method: 'initialize', params: {} }], {}, session({ protocolVersion: '2025-03-26' })),
      '2025-11-25',
    );
    assert.equal(
      judgedVersion('2027-01-01', [{ method: 'tools/list' }], { 'mcp-session-id': 's1' }, session({ protocolVersion: '2025-03-26' })),
      '2025-03-26',
    );
    assert.equal(
      judgedVersion('2099-01-01', [{ method: 'tools/list' }], { 'mcp-session-id': 's1' }, session({ protocolVersion: '2099-01-01' })),
      '2025-11-25',
    );
    assert.equal(judgedVersion('2027-01-01', [{ method: 'tools/list' }], {}, none), undefined);
  });
});

describe('engine: a subject naming an undefined version', () => {
  const engine = new RuleEngine(RULES, (id, err) => assert.fail(`${id} threw: ${String(err)}`));
  const ids = (s: Parameters<RuleEngine['evaluate']>[0]) => engine.evaluate(s, 'server').map((f) => f.rule);

  test('an exchange subject is judged by its era: -32022 on 400 is no reserved code, -32602 on 200 is the wrong code', () => {
    const params = { name: 'echo', arguments: {}, _meta: modernMeta('2027-01-01') };
    const right = subject({
      version: '2027-01-01',
      params,
      status: 400,
      response: errorMsg(-32022, 'Unsupported protocol version', { supported: ['2026-07-28'], requested: '2027-01-01' }),
    });
    assert.deepEqual(ids(right), []);
    const wrong = subject({ version: '2027-01-01', params, response: errorMsg(-32602, 'bad version') });
    assert.deepEqual(ids(wrong), ['unsupported-version-code']);
  });

  test('a POST subject is judged by its era too (not by the version-free rules alone)', () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', _meta: modernMeta('2027-01-01') } });
    const post: PostSubject = {
      kind: 'post',
      version: '2027-01-01',
      requestHeaders: {},
      request: decodeJson(Buffer.from(body)),
      status: 200,
      contentType: 'application/json',
      responseHeaders: { 'mcp-session-id': 'minted' },
      response: decodeJson(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { resultType: 'complete', content: [] } }))),
      responseBytes: 10,
      session: session(),
    };
    assert.ok(ids(post).includes('session-id-minted'), 'a 2026-07-28 rule judged it');
    const nothing = engine.evaluate(
      { ...post, version: 'constructor', request: decodeJson(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call"}')) },
      'server',
    );
    assert.ok(!nothing.some((f) => f.rule === 'session-id-minted'), 'no era, no table: version-free rules only');
  });
});
