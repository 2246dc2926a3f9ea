// What a server may ask of the client: sampling, elicitation and roots are client capabilities, and
// a server sends their requests only to a client that declared them in initialize
// (basic/lifecycle#capability-negotiation: "Both parties MUST only use capabilities that were
// successfully negotiated"). Judged once the client answered (or not): the request and the
// session's client capabilities are enough. Not judged when the proxy did not see initialize.
import { excerpt } from '../redact/excerpt.ts';
import { answerError } from './error-answers.ts';
import type { ExchangeRule, Report } from './types.ts';
import { ALL, LEGACY } from './versions.ts';

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

/**
 * A client's request answered with the error the client itself gave to a request the server sent
 * while it worked on it (same code, same message): a server that asked for sampling, got the
 * client's -32601, and passed it back as the answer to the client's tools/call, where -32601 says
 * tools/call does not exist. The error is about the server's request, not the client's.
 */
export const propagatedClientError: ExchangeRule = {
  id: 'propagated-client-error',
  group: 'codes',
  severity: 'warning',
  versions: ALL,
  party: 'server',
  subject: 'exchange',
  summary: "A request answered with the error the client gave a request of the server's meanwhile (its code and message passed back)",
  source:
    'https://www.jsonrpc.org/specification#error_object, https://modelcontextprotocol.io/specification/2025-11-25/server/tools#error-handling',
  check(s): Report[] {
    const e = answerError(s);
    if (!e) return [];
    const theirs = s.session.clientErrors?.find((c) => c.at >= s.request.startedAt && c.code === e.code && c.message === e.message);
    if (!theirs) return [];
    return [
      {
        message: `${s.request.method} was answered with error ${excerpt(e.code, 20)}, the error the client gave the server's ${theirs.method} meanwhile: it says what failed there, not here`,
        pointer: '/response/error',
        evidence: excerpt({ code: e.code, message: e.message }),
        fix: `answer ${s.request.method} with what failed for it: for tools/call, a tool execution error (an isError result saying the tool needed ${theirs.method} and the client refused it)`,
      },
    ];
  },
};
