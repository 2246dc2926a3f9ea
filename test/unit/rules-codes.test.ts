// The error-code table (which code each version defines, which range a code sits in) checked
// against the official schemas, and the code rules run on hand-built subjects for the paths a
// scenario server cannot reach (a modern session that knows the server's capabilities) and for
// inputs no server should send (they must never throw).
import { NO_VERDICT } from '../../src/verdicts.ts';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { classify, type Message } from '../../src/codec/jsonrpc.ts';
import type { Session } from '../../src/exchange/sessions.ts';
import { CODE_RULES, codeRange, DEFINED_CODES, definedIn, definitionOf, isDefinedFor, type CodeRange } from '../../src/rules/codes.ts';
import type { ExchangeRule, ExchangeSubject } from '../../src/rules/types.ts';
import { ALL } from '../../src/rules/versions.ts';

const schemaCodes = (version: string): number[] => {
  const text = readFileSync(new URL(`../fixtures/schemas/${version}/schema.json`, import.meta.url), 'utf8');
  return [...text.matchAll(/"const": (-32\d{3})\b/g)].map((m) => Number(m[1]));
};

describe('code table', () => {
  test('codeRange partitions -32768..-32000 as JSON-RPC 2.0 and 2026-07-28 do', () => {
    const cases: Array<[number, CodeRange]> = [
      [-32768, 'reserved'],
      [-32700, 'standard'],
      [-32699, 'reserved'],
      [-32600, 'standard'],
      [-32601, 'standard'],
      [-32602, 'standard'],
      [-32603, 'standard'],
      [-32604, 'reserved'],
      [-32100, 'reserved'],
      [-32099, 'spec-owned'],
      [-32042, 'spec-owned'],
      [-32022, 'spec-owned'],
      [-32020, 'spec-owned'],
      [-32019, 'legacy'],
      [-32002, 'legacy'],
      [-32000, 'legacy'],
      [-31999, 'application'],
      [-32769, 'application'],
      [-1, 'application'],
      [0, 'application'],
      [1000, 'application'],
    ];
    for (const [code, range] of cases) assert.equal(codeRange(code), range, String(code));
  });

  test("every code a version's schema.json names is defined for that version", () => {
    for (const version of ALL) {
      for (const code of schemaCodes(version)) assert.ok(isDefinedFor(code, version), `${code} in ${version}`);
    }
  });

  test('per-version definitions (R82)', () => {
    const defined = (code: number) => ALL.filter((v) => isDefinedFor(code, v));
    for (const code of [-32700, -32600, -32601, -32602, -32603]) assert.deepEqual(defined(code), ALL);
    assert.deepEqual(defined(-32002), ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']);
    assert.deepEqual(defined(-32042), ['2025-11-25']);
    for (const code of [-32020, -32021, -32022]) assert.deepEqual(defined(code), ['2026-07-28']);
    assert.deepEqual(defined(-32001), []);
    assert.deepEqual(defined(-32050), []);
    assert.equal(definedIn(-32002), '2024-11-05..2025-11-25');
    assert.equal(definedIn(-32042), '2025-11-25');
    assert.equal(definedIn(-32050), 'no version');
    assert.equal(definitionOf(-32022)?.name, 'Unsupported protocol version');
  });

  test('the table has one row per code, every row inside the reserved range, versions from the version table', () => {
    assert.equal(new Set(DEFINED_CODES.map((d) => d.code)).size, DEFINED_CODES.length);
    for (const d of DEFINED_CODES) {
      assert.notEqual(codeRange(d.code), 'application', String(d.code));
      assert.ok(d.versions.length > 0 && d.versions.every((v) => ALL.includes(v)), String(d.code));
    }
  });
});

// --- rules on hand-built subjects ---

const session = (over: Partial<Session> = {}): Session => ({
  key: 'anon:x',
  sessionId: undefined,
  protocolVersion: undefined,
  era: undefined,
  serverCapabilities: undefined,
  clientCapabilities: undefined,
  tools: new Map(),
  toolsComplete: false,
  toolsFromFirstPage: false,
  ...over,
});

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };

function subject(over: Partial<ExchangeSubject> & { method?: string; params?: unknown } = {}): ExchangeSubject {
  const { method = 'tools/call', params = { name: 'echo', _meta: META }, ...rest } = over;
  return {
    kind: 'exchange',
    version: '2026-07-28',
    request: {
      scope: 'x:1',
      from: 'client',
      id: 7,
      method,
      tool: undefined,
      params,
      sessionId: undefined,
      protocolVersion: '2026-07-28',
      startedAt: 0,
      requestBytes: 10,
      headers: {},
      verdict: NO_VERDICT,
    },
    requestHeaders: {},
    response: undefined,
    outcome: 'result',
    status: 200,
    contentType: 'application/json',
    transport: 'json',
    proxyError: undefined,
    bodyProblem: undefined,
    unmatched: [],
    session: session(),
    ...rest,
  };
}

const errorMsg = (code: unknown, message: unknown = 'x', id: unknown = 7, data?: unknown): Message =>
  classify({ jsonrpc: '2.0', id, error: { code, message, ...(data === undefined ? {} : { data }) } });

const rule = (id: string): ExchangeRule => {
  const r = CODE_RULES.find((x) => x.id === id);
  assert.ok(r && r.subject === 'exchange', id);
  return r;
};

describe('code rules on hand-built subjects', () => {
  test('unknown-method-wrong-code: a modern session that knows the capabilities (from server/discover)', () => {
    const r = rule('unknown-method-wrong-code');
    const s = (capabilities: Record<string, unknown> | undefined, code: number) =>
      subject({
        method: 'prompts/list',
        params: { _meta: META },
        response: errorMsg(code, 'nope'),
        session: session({ serverCapabilities: capabilities }),
      });
    const [fired] = r.check(s({ tools: {} }, -32602));
    assert.equal(fired?.severity, undefined, "modern: error (the rule's severity)");
    assert.match(fired?.fix ?? '', /-32601.*404/);
    assert.deepEqual(r.check(s({ tools: {}, prompts: {} }, -32602)), [], 'declared: the server may reject params');
    assert.deepEqual(r.check(s(undefined, -32602)), [], 'capabilities unknown');
    assert.deepEqual(r.check(s({ tools: {} }, -32601)), []);
    assert.deepEqual(r.check(s({ tools: {} }, -32022)), [], 'a version rejection precedes routing');
  });

  test('modern -32601 rules stay silent for a server that negotiated a legacy version (probe traffic)', () => {
    const legacy = session({ era: 'legacy', protocolVersion: '2025-11-25' });
    const s = subject({
      method: 'server/discover',
      params: { _meta: META },
      response: errorMsg(-32601, 'Method not found'),
      session: legacy,
    });
    assert.deepEqual(rule('server-discover-missing').check(s), []);
    assert.deepEqual(rule('unknown-method-status').check(s), []);
    assert.equal(rule('server-discover-missing').check({ ...s, session: session() }).length, 1);
  });

  test("an id-less 4xx with no modern code to a modern request is a legacy server's probe answer", () => {
    const s = subject({
      status: 400,
      outcome: 'invalid-response',
      unmatched: [errorMsg(-32000, 'Bad Request: Unsupported protocol version', null)],
    });
    for (const r of CODE_RULES) assert.deepEqual((r as ExchangeRule).check(s), [], r.id);
    const modern = subject({ status: 200, outcome: 'invalid-response', unmatched: [errorMsg(-32020, 'Header mismatch', null)] });
    assert.equal(rule('error-status-pairing').check(modern).length, 1);
    assert.equal(rule('error-id-null').check(modern).length, 1);
  });

  test('no rule throws on any input', () => {
    const odd: unknown[] = [undefined, null, 0, -32002.5, NaN, '-32601', [], {}, { a: 1 }, 'x'.repeat(5000)];
    const responses: Array<Message | undefined> = [undefined];
    for (const v of odd) {
      responses.push(errorMsg(v, v, 7, v), errorMsg(-32022, v, null, v), errorMsg(-32042, 'x', 7, { elicitations: [v] }));
      responses.push(classify({ jsonrpc: '2.0', id: 7, result: v }), classify(v));
    }
    const sessions = [session(), session({ era: 'legacy', serverCapabilities: {} })];
    for (const version of [...ALL, undefined, 'garbage']) {
      for (const response of responses) {
        for (const params of odd) {
          for (const method of ['resources/read', 'server/discover', 'completion/complete', 'x/y', '']) {
            for (const sess of sessions) {
              const s = subject({
                version,
                method,
                params,
                response,
                session: sess,
                status: response ? 200 : 400,
                unmatched: response ? [] : [errorMsg(null, null, null)],
              });
              for (const r of CODE_RULES) assert.ok(Array.isArray((r as ExchangeRule).check(s)), r.id);
            }
          }
        }
      }
    }
  });

  test('rule metadata: ids unique, kebab-case, versions from the version table', () => {
    assert.equal(new Set(CODE_RULES.map((r) => r.id)).size, CODE_RULES.length);
    for (const r of CODE_RULES) {
      assert.match(r.id, /^[a-z]+(-[a-z0-9]+)*$/);
      assert.ok(r.versions.length > 0 && r.versions.every((v) => ALL.includes(v)), r.id);
      assert.ok(r.summary.length > 0 && !r.summary.includes('\n') && r.source.split(', ').every((u) => /^https:\/\/\S+$/.test(u)), r.id);
    }
  });
});
