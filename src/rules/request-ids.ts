// A requester must not reuse an id while a request under it still awaits its response (legacy
// versions forbid any reuse within the session, which a bounded proxy cannot remember, so what is
// judged is the reuse it sees: an id already in flight). The proxy still matches each answer to
// its own request (exchange/table.ts), so the finding is about the client, not lost answers.
import { excerpt } from '../redact/excerpt.ts';
import type { ExchangeRule, Report } from './types.ts';
import { ALL } from './versions.ts';

const requestIdInFlight: ExchangeRule = {
  id: 'request-id-in-flight',
  group: 'client',
  severity: 'warning',
  versions: ALL,
  party: 'client',
  subject: 'exchange',
  summary: 'A client request reuses the id of a request of the same session that still awaits its response',
  source: 'https://modelcontextprotocol.io/specification/2026-07-28/basic/index#requests',
  check(s): Report[] {
    if (s.request.from !== 'client' || !s.request.idInFlight) return [];
    return [
      {
        message: `${s.request.method} request id ${excerpt(s.request.id)} is already in use by a request of this session still awaiting its response`,
        pointer: '/request/id',
        evidence: excerpt(s.request.id),
        fix: 'give every request of a session an id of its own (a counter), never one still awaiting a response',
      },
    ];
  },
};

export const REQUEST_ID_RULES: readonly ExchangeRule[] = [requestIdInFlight];
