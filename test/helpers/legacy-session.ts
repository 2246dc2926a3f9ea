// A raw legacy HTTP+SSE client for tests: the session's GET stream through a proxy, the endpoint
// its first event names, and POSTs to it. What it opens is closed by the caller's `closers`.
import assert from 'node:assert/strict';
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
