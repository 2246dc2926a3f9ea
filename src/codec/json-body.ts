// Decodes a complete body (or SSE data) into a JSON value without throwing. Distinguishes what a
// rule needs to know: empty, not UTF-8, not JSON, HTML.
import { classifyPayload, rememberSource, type Payload } from './jsonrpc.ts';

export type Decoded = { ok: true; payload: Payload } | { ok: false; problem: 'empty' | 'not-utf8' | 'html' | 'not-json'; detail: string };

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

export function decodeJson(bytes: Uint8Array): Decoded {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, problem: 'not-utf8', detail: 'body is not valid UTF-8' };
  }
  return decodeJsonText(text);
}

export function decodeJsonText(text: string): Decoded {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, problem: 'empty', detail: 'body is empty' };
  if (trimmed.startsWith('<')) return { ok: false, problem: 'html', detail: 'body looks like HTML or XML' };
  try {
    const payload = classifyPayload(JSON.parse(trimmed));
    // The ids' raw text is read from it only if a rewrite or a big id needs it (jsonrpc.ts idTokenOf).
    rememberSource(payload, trimmed);
    return { ok: true, payload };
  } catch (err) {
    // V8 quotes a piece of the body in its message; the body may hold secrets, so the quote goes.
    return { ok: false, problem: 'not-json', detail: (err as Error).message.replace(/(?:\.\.\.)?".*"(?:\.\.\.)?/s, '"…"') };
  }
}
