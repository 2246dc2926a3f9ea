// Requests a server must refuse, and how, through the real proxy (the article's claims S9, S22,
// S26, S37): a 2026-07-28 request without its _meta, a tools/call that is no CallToolRequest, a
// cursor the server cannot read (invalid-params-code), a legacy initialize refused over its
// version. (The code rules for S19 and S27, unknown-method-generic-error and
// method-not-found-on-404, are in rules-codes.)
// Each fires on the bad answer and stays silent on the right one and on a look-alike.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertFires, assertSilent, MODERN, runScenario, type Reply, type ScenarioRequest } from '../helpers/rule-scenario.ts';
import { fixtureServer, initialize, startStdio } from '../helpers/stdio.ts';

type Req = { id?: unknown } | undefined;
const V4 = '2025-11-25';

const error =
  (code: number, message: string, opts: { status?: number; data?: unknown } = {}) =>
  (req: Req): Reply => ({
    status: opts.status,
    json: { jsonrpc: '2.0', id: req?.id, error: { code, message, ...(opts.data === undefined ? {} : { data: opts.data }) } },
  });
const result =
  (value: Record<string, unknown>) =>
  (req: Req): Reply => ({ json: { jsonrpc: '2.0', id: req?.id, result: value } });
const complete = (value: Record<string, unknown>) => result({ resultType: 'complete', ...value });

interface Case {
  name: string;
  version: string;
  request: ScenarioRequest;
  respond: (req: Req) => Reply;
  fires?: string;
  silent: string[];
  message?: RegExp;
}

const noMeta: ScenarioRequest = { method: 'tools/list', params: {}, noMeta: true };
const withMeta: ScenarioRequest = { method: 'tools/list', params: {} };
const legacyInit = (version: string): ScenarioRequest => ({
  method: 'initialize',
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 't', version: '1' } },
});
const listPage: ScenarioRequest = { method: 'tools/list', params: { cursor: 'bogus-cursor' } };

const cases: Case[] = [
  // missing-meta-served (S26)
  {
    name: 'a 2026-07-28 request without _meta served anyway',
    version: MODERN,
    request: noMeta,
    respond: complete({ tools: [], ttlMs: 0, cacheScope: 'private' }),
    fires: 'missing-meta-served',
    silent: [],
    message: /lacked .*protocolVersion.* and was served anyway/,
  },
  {
    name: 'a 2026-07-28 request without _meta refused with -32603',
    version: MODERN,
    request: noMeta,
    respond: error(-32603, 'Internal error', { status: 500 }),
    silent: ['missing-meta-served'],
  },
  {
    name: 'a 2026-07-28 request without _meta refused with -32603 on 200',
    version: MODERN,
    request: noMeta,
    respond: error(-32603, 'Internal error'),
    fires: 'missing-meta-served',
    silent: [],
    message: /instead of -32602/,
  },
  {
    name: 'a 2026-07-28 request without _meta refused with -32602 on 400 (right)',
    version: MODERN,
    request: noMeta,
    respond: error(-32602, 'Missing _meta', { status: 400 }),
    silent: ['missing-meta-served', 'error-status-pairing'],
  },
  {
    name: 'a 2026-07-28 request with its _meta served (right)',
    version: MODERN,
    request: withMeta,
    respond: complete({ tools: [], ttlMs: 0, cacheScope: 'private' }),
    silent: ['missing-meta-served'],
  },
  // malformed-call-as-result (S9)
  {
    name: 'a tools/call naming no tool answered with an isError result',
    version: V4,
    request: { method: 'tools/call', params: { arguments: {} } },
    respond: result({ content: [{ type: 'text', text: 'Tool undefined failed' }], isError: true }),
    fires: 'malformed-call-as-result',
    silent: [],
    message: /names no tool.*isError result/,
  },
  {
    name: 'a tools/call whose arguments are a string answered with a result',
    version: V4,
    request: { method: 'tools/call', params: { name: 'echo', arguments: 'hi' } },
    respond: result({ content: [{ type: 'text', text: 'hi' }] }),
    fires: 'malformed-call-as-result',
    silent: [],
  },
  {
    name: 'a tools/call naming no tool answered with -32602 (right)',
    version: V4,
    request: { method: 'tools/call', params: { arguments: {} } },
    respond: error(-32602, 'Invalid params: name is required'),
    silent: ['malformed-call-as-result'],
  },
  {
    name: 'a well-formed tools/call answered with an isError result (a tool that ran)',
    version: V4,
    request: { method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } },
    respond: result({ content: [{ type: 'text', text: 'Rate limited, try again in 10 s' }], isError: true }),
    silent: ['malformed-call-as-result'],
  },
  // invalid-params-code: a cursor the server cannot read (S22)
  {
    name: 'a cursor the server cannot read, -32603',
    version: V4,
    request: listPage,
    respond: error(-32603, 'Invalid cursor: bogus-cursor'),
    fires: 'invalid-params-code',
    silent: [],
  },
  {
    name: 'a cursor the server cannot read, -32602 (right)',
    version: V4,
    request: listPage,
    respond: error(-32602, 'Invalid cursor'),
    silent: ['invalid-params-code'],
  },
  {
    name: 'a paged list failing for another reason, -32603 (nothing about the cursor)',
    version: V4,
    request: listPage,
    respond: error(-32603, 'Database unavailable'),
    silent: ['invalid-params-code'],
  },
  // initialize-version-error (S37)
  {
    name: 'a legacy initialize offering "1.0.0" refused with -32603',
    version: V4,
    request: legacyInit('1.0.0'),
    respond: error(-32603, 'Unsupported protocol version'),
    fires: 'initialize-version-error',
    silent: [],
    message: /"1\.0\.0" was refused with -32603/,
  },
  {
    name: 'a legacy initialize refused with -32602 but no data.supported',
    version: V4,
    request: legacyInit('1.0.0'),
    respond: error(-32602, 'Unsupported protocol version'),
    fires: 'initialize-version-error',
    silent: [],
    message: /without data\.supported/,
  },
  {
    name: 'a legacy initialize refused as the spec example does (right)',
    version: V4,
    request: legacyInit('1.0.0'),
    respond: error(-32602, 'Unsupported protocol version', { data: { supported: [V4], requested: '1.0.0' } }),
    silent: ['initialize-version-error'],
  },
  {
    name: 'a legacy initialize negotiated down (right)',
    version: V4,
    request: legacyInit('1.0.0'),
    respond: result({ protocolVersion: V4, capabilities: {}, serverInfo: { name: 's', version: '1' } }),
    silent: ['initialize-version-error'],
  },
  {
    name: 'a legacy initialize of a known version refused for another reason',
    version: V4,
    request: legacyInit(V4),
    respond: error(-32603, 'Server is shutting down'),
    silent: ['initialize-version-error'],
  },
];

describe('rules for requests a server must refuse', () => {
  for (const c of cases) {
    test(`${c.name} (${c.version}): ${c.fires ? `fires ${c.fires}` : 'silent'}`, async () => {
      const res = await runScenario({ version: c.version, request: c.request, respond: c.respond });
      assert.equal(res.records.filter((r) => r.msg === 'rule failed').length, 0, 'no rule threw');
      if (c.fires) {
        const v = assertFires(res, c.fires);
        if (c.message) assert.match(String(v.message), c.message);
        assert.equal(typeof v.fix, 'string');
      }
      for (const rule of c.silent) assertSilent(res, rule);
    });
  }
});

describe('on stdio too', () => {
  const closers: Array<() => Promise<void>> = [];
  after(async () => {
    for (const close of closers) await close();
  });

  test('a tools/call naming no tool, answered with an isError result by a stdio server: malformed-call-as-result', async () => {
    const run = await startStdio(await fixtureServer());
    closers.push(() => run.close());
    run.send(initialize(1));
    run.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { arguments: {} } });
    const answer = await run.waitFor((m) => m.id === 2);
    assert.equal((answer.result as { isError?: boolean }).isError, true);
    const v = await run.waitForLog((r) => r.msg === 'violation' && r.rule === 'malformed-call-as-result');
    assert.match(String(v.message), /names no tool/);
  });
});
