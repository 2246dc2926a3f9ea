// What the fault tests share: JSON-RPC bodies, a POST as an MCP client sends it, and bounded waits.
import assert from 'node:assert/strict';
import { request } from 'undici';
import type { TestProxy } from './proxy.ts';

export const ACCEPT = 'application/json, text/event-stream';

export const rpc = (id: unknown, method = 'tools/call', params: unknown = { name: 'echo', arguments: {} }): string =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params });

/** A tools/call of `tool` with no arguments. */
export const call = (id: unknown, tool: string): string => rpc(id, 'tools/call', { name: tool, arguments: {} });

export const post = (url: URL, body: string, headers: Record<string, string> = {}) =>
  request(url, { method: 'POST', body, headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers } });

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let okSeq = 0;
/** A tools/call of `ok` through `proxy` is answered (by an upstream that answers it `ok`) and logged as a result. */
export async function assertStillServes(proxy: { url: URL; log: TestProxy['log'] }): Promise<void> {
  const id = `ok-${++okSeq}`;
  const res = await post(proxy.url, call(id, 'ok'));
  assert.equal(res.statusCode, 200, 'a normal request afterwards');
  const body = (await res.body.json()) as { id: unknown; result?: { content: unknown } };
  assert.equal(body.id, id);
  assert.deepEqual(body.result?.content, [{ type: 'text', text: 'ok' }]);
  const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === id);
  assert.equal(record.outcome, 'result');
}

/** Polls `cond` every 10 ms; rejects naming `what` after `ms`. */
export async function eventually(ms: number, what: () => string, cond: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = performance.now() + ms;
  while (!(await cond())) {
    if (performance.now() > deadline) throw new Error(`not within ${ms} ms: ${what()}`);
    await sleep(10);
  }
}

/** Resolves with `p`, or rejects naming `what` after `ms`. */
export async function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Splits an SSE body the proxy ended after the upstream broke it: what the server sent (`head`,
 * complete events only), then the proxy's own error event for the request still waiting.
 */
export function brokenStream(
  text: string,
  head: string,
): { head: string; error: { id: unknown; code: number; reason: string } | undefined } {
  const rest = text.startsWith(head) ? text.slice(head.length) : text;
  const data = /^data: (.*)$/m.exec(rest)?.[1];
  const parsed = data ? (JSON.parse(data) as { id: unknown; error: { code: number; data: { reason: string } } }) : undefined;
  return {
    head: text.slice(0, head.length),
    error: parsed && { id: parsed.id, code: parsed.error.code, reason: parsed.error.data.reason },
  };
}
