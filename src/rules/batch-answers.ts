// A batch answered with more responses for one id than the client's batch asked with it:
// JSON-RPC 2.0 answers each request once, and a client that matches answers by id can take only
// one of them (which one is the server's guess). Judged on the POST's JSON body under every
// version: an array answering an array is judged wherever it travels (batch-not-allowed says
// whether the client could send one). Ids are compared as the correlator compares them (1 and "1"
// are two ids; two integers beyond 2^53 by their raw text). Errors with a null or missing id
// answer unreadable requests (several may come in one batch): they are not one id answered twice.
import { idKey, idTokenOf, type JsonRpcId, type Message } from '../codec/jsonrpc.ts';
import { excerpt } from '../redact/excerpt.ts';
import { pointer } from '../codec/json-pointer.ts';
import { messagesOf } from './read.ts';
import type { PostRule, Report } from './types.ts';
import { ALL } from './versions.ts';

/** A response's id, when it has one of a valid type. */
const answerId = (m: Message): JsonRpcId | undefined =>
  (m.kind === 'result' || m.kind === 'error' || m.kind === 'invalid') && m.id !== null && m.id !== undefined ? m.id : undefined;

export const batchDuplicateAnswer: PostRule = {
  id: 'batch-duplicate-answer',
  group: 'batch',
  severity: 'error',
  versions: ALL,
  party: 'server',
  subject: 'post',
  summary: 'A JSON-RPC batch was answered with two or more responses for one id',
  source: 'https://www.jsonrpc.org/specification#batch, https://modelcontextprotocol.io/specification/2025-03-26/basic/index#batching',
  check(s): Report[] {
    if (!s.response?.ok || !s.response.payload.batch) return [];
    // How many requests of the client's batch carry each id (a client may repeat one: reusing an id is its own fault).
    const asked = new Map<string, number>();
    for (const m of messagesOf(s.request)) {
      if (m.kind === 'request') asked.set(idKey(m.id, idTokenOf(m)), (asked.get(idKey(m.id, idTokenOf(m))) ?? 0) + 1);
    }
    const seen = new Map<string, number>();
    const out: Report[] = [];
    s.response.payload.messages.forEach((m, i) => {
      const id = answerId(m);
      if (id === undefined) return;
      const key = idKey(id, idTokenOf(m));
      const count = (seen.get(key) ?? 0) + 1;
      seen.set(key, count);
      // Reported once per id, at the first answer too many.
      if (count !== Math.max(1, asked.get(key) ?? 0) + 1 || out.length >= 3) return;
      const requests = asked.get(key) ?? 0;
      out.push({
        message: `the server answered id ${excerpt(JSON.stringify(id), 60)} more than once in one batch (${requests === 0 ? 'no request of the batch has that id' : `${requests} request${requests > 1 ? 's' : ''} with that id`})`,
        pointer: pointer('response', i, 'id'),
        evidence: excerpt(m.value),
        fix: 'answer each request of a batch exactly once: one response per request id, in one array',
      });
    });
    return out;
  },
};

export const BATCH_ANSWER_RULES: readonly PostRule[] = [batchDuplicateAnswer];
