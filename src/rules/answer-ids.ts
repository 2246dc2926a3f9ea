// Whose answer is it: a response must carry its request's id exactly, type included (`1` and
// "1" are different ids), and answer a request of the exchange it travels in. A client that
// matches `Number(id)` (the official SDK does) takes "3" as the answer to 3, so the proxy matches
// it too, and flags the change; an answer to a request this exchange never carried matches
// nothing, and is flagged on the exchange it came in.
import type { JsonRpcId, Message } from '../codec/jsonrpc.ts';
import { excerpt } from '../redact/excerpt.ts';
import type { ExchangeRule, Report } from './types.ts';
import { ALL } from './versions.ts';

const idOf = (m: Message | undefined): JsonRpcId | null | undefined =>
  m && (m.kind === 'result' || m.kind === 'error' || m.kind === 'invalid') ? m.id : undefined;

const answerIdType: ExchangeRule = {
  id: 'answer-id-type',
  group: 'framing',
  severity: 'error',
  versions: ALL,
  party: 'server',
  subject: 'exchange',
  summary: 'A response carries its request\'s id with another type ("3" for 3, or 3 for "3")',
  source:
    'https://www.jsonrpc.org/specification#response_object, https://modelcontextprotocol.io/specification/2026-07-28/basic/index#responses',
  check(s): Report[] {
    const id = idOf(s.response);
    if (s.request.from !== 'client' || id === undefined || id === null || typeof id === typeof s.request.id) return [];
    return [
      {
        message: `${s.request.method} ${JSON.stringify(s.request.id)} was answered with id ${JSON.stringify(id)}: the same number, another type`,
        pointer: '/response/id',
        evidence: excerpt(id),
        fix: `echo the request's id exactly as it came, type included: ${JSON.stringify(s.request.id)}`,
      },
    ];
  },
};

const answerForeignId: ExchangeRule = {
  id: 'answer-foreign-id',
  group: 'framing',
  severity: 'error',
  versions: ALL,
  party: 'server',
  subject: 'exchange',
  summary: "The response to a request carried an answer for an id that request's exchange never sent",
  source: 'https://www.jsonrpc.org/specification#response_object',
  check(s): Report[] {
    if (s.request.from !== 'client' || s.response !== undefined) return [];
    const foreign = s.unmatched.find((m) => {
      const id = idOf(m);
      return id !== undefined && id !== null;
    });
    if (!foreign) return [];
    return [
      {
        message: `${s.request.method} ${JSON.stringify(s.request.id)} got no answer; its response carried one for id ${JSON.stringify(idOf(foreign))}, which this exchange never asked`,
        pointer: '/response',
        evidence: excerpt(foreign.value),
        fix: `answer each request on the response of the HTTP request that carried it, with its own id (${JSON.stringify(s.request.id)})`,
      },
    ];
  },
};

export const ANSWER_ID_RULES: readonly ExchangeRule[] = [answerIdType, answerForeignId];
