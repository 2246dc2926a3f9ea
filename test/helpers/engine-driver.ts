// Drives the exchange engine without a socket, as a transport would: a session already
// initialized, a clock the test moves, a client POST and the upstream's JSON answer. Shared by the
// engine's unit tests.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { decodeJson } from '../../src/codec/json-body.ts';
import { DEFAULT_LIMITS } from '../../src/config/defaults.ts';
import { loadPolicyFile } from '../../src/config/load.ts';
import { runtimeFactory } from '../../src/config/runtime.ts';
import type { Policy } from '../../src/config/types.ts';
import { Engine } from '../../src/engine/engine.ts';
import type { ExchangeHttp, Judged, JudgedExchange } from '../../src/engine/plans.ts';
import type { ExchangeState } from '../../src/engine/state.ts';
import type { ResponseHttp } from '../../src/rules/subjects.ts';

export const policyFile = async (name: string): Promise<Policy> => {
  const loaded = await loadPolicyFile(fileURLToPath(new URL(`../../config/${name}.yaml`, import.meta.url)));
  assert.ok(loaded.ok);
  return loaded.policy;
};
export const AUDIT = await policyFile('audit');
export const ENFORCE = await policyFile('enforce');
export const VERSION = '2025-06-18';
export const SID = 'session-1';

/** An engine under `policy`, with a clock the test moves, and a session already initialized. */
export function engineUnder(policy: Policy, limits: Partial<typeof DEFAULT_LIMITS> = {}) {
  let clock = 1_000;
  const engine = new Engine({
    limits: { ...DEFAULT_LIMITS, ...limits },
    runtime: runtimeFactory(() => {}),
    policy: () => policy,
    now: () => clock,
  });
  const headers = {
    'mcp-session-id': SID,
    'mcp-protocol-version': VERSION,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const session = engine.sessions.open(`sid:${SID}`, SID, clock);
  session.protocolVersion = VERSION;
  return {
    engine,
    advance: (ms: number) => (clock += ms),
    /** A POST of `messages` (one object, or a batch): its state and the client body's plan. */
    post(messages: unknown) {
      const body = Buffer.from(JSON.stringify(messages));
      const decoded = decodeJson(body);
      const x = engine.openPost(headers, decoded);
      return { x, plan: engine.clientBody(x, body, body.length, decoded) };
    },
    /** The upstream answered `status` with a JSON body (`text`), read whole. */
    json(x: ExchangeState, status: number, text: string, contentType = 'application/json') {
      engine.upstreamAnswered(x, status, { 'content-type': contentType });
      const http: ResponseHttp = { status, contentType, transport: 'json' };
      return engine.serverBody(x, { kind: 'complete', bytes: Buffer.from(text) }, http, Buffer.byteLength(text), undefined);
    },
  };
}

export const call = (id: number | string, name = 'weather', args: unknown = { city: 'Paris' }) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});
export const exchangesOf = (judged: readonly Judged[]): Array<{ judged: JudgedExchange; http: ExchangeHttp }> =>
  judged.flatMap((j) => (j.kind === 'exchange' ? [j] : []));
export const rulesOf = (j: JudgedExchange): string[] => j.findings.map((f) => f.rule);
export const sseHttp: ExchangeHttp = { status: 200, transport: 'sse' };
export const sseFrame: ResponseHttp = { status: 200, contentType: 'text/event-stream', transport: 'sse' };
export const event = (message: unknown) => {
  const data = JSON.stringify(message);
  const raw = Buffer.from(`event: message\ndata: ${data}\n\n`);
  return { data, size: raw.length, raw };
};
