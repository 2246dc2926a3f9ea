// What a server may ask of the client: sampling, elicitation and roots are client capabilities, and
// a server sends their requests only to a client that declared them in initialize
// (basic/lifecycle#capability-negotiation: "Both parties MUST only use capabilities that were
// successfully negotiated"). Judged once the client answered (or not): the request and the
// session's client capabilities are enough. Not judged when the proxy did not see initialize.
import { excerpt } from '../redact/excerpt.ts';
import type { ExchangeRule, Report } from './types.ts';
import { LEGACY } from './versions.ts';

/** The client capability each server-to-client request needs. */
const CLIENT_CAPABILITY: Readonly<Record<string, string>> = {
  'sampling/createMessage': 'sampling',
  'elicitation/create': 'elicitation',
  'roots/list': 'roots',
};

export const serverRequestWithoutCapability: ExchangeRule = {
  id: 'server-request-without-capability',
  group: 'lifecycle',
  severity: 'error',
  // 2026-07-28 has no server-to-client requests (a tool asks for input with input_required).
  versions: LEGACY,
  party: 'server',
  subject: 'exchange',
  summary: 'The server sent sampling/createMessage, elicitation/create or roots/list to a client that declared no such capability',
  source: 'https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#capability-negotiation',
  check(s): Report[] {
    if (s.request.from !== 'server') return [];
    const needed = CLIENT_CAPABILITY[s.request.method];
    const declared = s.session.clientCapabilities;
    if (needed === undefined || declared === undefined || needed in declared) return [];
    return [
      {
        message: `the server sent ${s.request.method} to a client whose initialize declared no ${needed} capability`,
        pointer: '/request/method',
        evidence: excerpt({ method: s.request.method, clientCapabilities: declared }),
        fix: `send ${s.request.method} only to a client that declared "${needed}" in initialize; without it, do the work another way or fail the tool call with an isError result that says what is missing`,
      },
    ];
  },
};
