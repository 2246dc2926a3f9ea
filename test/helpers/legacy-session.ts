// A raw legacy HTTP+SSE client for tests: the session's GET stream through a proxy, the endpoint
// its first event names, and POSTs to it. What it opens is closed by the caller's `closers`.
import assert from 'node:assert/strict';
import { request } from 'undici';
import { sseReader, type SseReader } from './sse-reader.ts';

export interface LegacySessionClient {
  events: SseReader;
  /** The endpoint event's data as the client got it. */
  endpoint: string;
  post(message: unknown): Promise<Response>;
}

export async function openLegacySession(proxy: { url: URL }, closers: Array<() => Promise<void>>): Promise<LegacySessionClient> {
  const res = await fetch(proxy.url, { headers: { accept: 'text/event-stream' } });
  assert.equal(res.status, 200);
  const events = sseReader(res.body);
  closers.push(() => events.cancel());
  const first = await events.next();
  assert.equal(first.event, 'endpoint');
  return {
    events,
    endpoint: first.data,
    post: (message) =>
      fetch(new URL(first.data, proxy.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(message),
      }),
  };
}

type Rec = Record<string, unknown>;

/** How many POSTs driveLegacySession sends, and how many of them are requests (with an id). */
export const LEGACY_DRIVE = { posts: 6, requests: 5 };

/**
 * One scripted legacy session through `front` (initialize, initialized, tools/list, an echo, an
 * unknown tool, ping): every POST on a new connection, each answer read off the stream before the
 * next. `postsTo`: where the POSTs go instead, asked once the stream is open. Returns the answers
 * in order.
 */
export async function driveLegacySession(front: URL, postsTo: () => Promise<URL> = async () => front): Promise<Rec[]> {
  const res = await fetch(front, { headers: { accept: 'text/event-stream' } });
  assert.equal(res.status, 200);
  const events = sseReader(res.body);
  const endpoint = (await events.next()).data;
  const origin = await postsTo();
  let id = 0;
  const answers: Rec[] = [];
  const post = async (method: string, params?: Rec, notification = false) => {
    const message = notification ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', id: ++id, method, params };
    const answer = await request(new URL(endpoint, origin), {
      method: 'POST',
      reset: true,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(message),
    });
    assert.equal(answer.statusCode, 202, `${method}: accepted`);
    await answer.body.text();
    if (!notification) answers.push(JSON.parse((await events.next()).data) as Rec);
  };
  await post('initialize', { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'legacy-driver', version: '1' } });
  await post('notifications/initialized', undefined, true);
  await post('tools/list', {});
  await post('tools/call', { name: 'echo', arguments: { message: 'hi' } });
  await post('tools/call', { name: 'no-such-tool', arguments: {} });
  await post('ping', {});
  await events.cancel();
  return answers;
}
