// A verdict for every finding (under audit.yaml) and every change (under enforce.yaml) the corpus
// shows, with the spec's reason. realworld-corpus.test.ts fails on a finding or change that has no
// verdict here, on a verdict that no longer matches anything, on a wrong change and on an
// error-severity false positive. Findings are keyed "step | rule", changes by step.

export interface FindingVerdict {
  verdict: 'true-positive' | 'false-positive';
  why: string;
}

export interface ChangeVerdict {
  verdict: 'right' | 'wrong';
  why: string;
}

export interface ServerVerdicts {
  findings: Record<string, FindingVerdict>;
  changes: Record<string, ChangeVerdict>;
}

// Reasons several servers share.
const CLIENT_SENT_IT: FindingVerdict = {
  verdict: 'true-positive',
  why: 'the session sends a body that is not JSON and JSON whose method is 42 on purpose: the client rule says so (client party)',
};
const UNKNOWN_TOOL_CODE: FindingVerdict = {
  verdict: 'true-positive',
  why: 'server/tools#error-handling lists unknown tools among protocol errors, JSON-RPC -32602 in every version; -32603 says the server failed',
};
const UNKNOWN_TOOL_ISERROR: FindingVerdict = {
  verdict: 'true-positive',
  why: 'an isError result quoting -32602 in its text: every version asks for the JSON-RPC error -32602 (SEP-2145, open, would allow it: answers.unknownTool: iserror)',
};
const INVALID_REQUEST: FindingVerdict = {
  verdict: 'true-positive',
  why: 'JSON-RPC 2.0: JSON that is not a valid Request object is -32600 Invalid Request; -32700 is for text that does not parse',
};
const TO_32602: ChangeVerdict = {
  verdict: 'right',
  why: 'the unknown tool reaches the client as JSON-RPC -32602 "Unknown tool: NAME", what every version asks; the server message is kept in data',
};

const UNANSWERED: FindingVerdict = {
  verdict: 'true-positive',
  why: 'JSON-RPC 2.0 §5: a line that is not JSON, or JSON that is no valid request, still gets a response (-32700, -32600); the server wrote none on stdout before the session ended (direct: nothing either)',
};
// enforce.yaml blocks a client message that is no JSON-RPC at all (request-envelope): one kills the Go and Rust SDKs' stdio servers.
const BLOCKED_NOT_JSON: ChangeVerdict = {
  verdict: 'right',
  why: "request-envelope: block. The proxy answers the body that is not JSON itself, -32700 Parse error with id null on HTTP 400, what JSON-RPC 2.0 asks (the server's own answer was a failure too); the server never reads it",
};
const BLOCKED_NOT_A_REQUEST: ChangeVerdict = {
  verdict: 'right',
  why: "request-envelope: block. The proxy answers JSON that is no request itself, -32600 Invalid Request with the id it could read, what JSON-RPC 2.0 asks (the server's own answer was a failure too); the server never reads it",
};
const STDIO_NOT_A_REQUEST: ChangeVerdict = {
  verdict: 'right',
  why: 'request-envelope: block. The line never reaches the server, and the client gets the -32600 Invalid Request (with the id it could read) JSON-RPC 2.0 owes it, where the server sent nothing',
};

export const VERDICTS: Record<string, ServerVerdicts> = {
  'server-memory (SDK 1.0)': {
    findings: {
      'malformed input | request-envelope': CLIENT_SENT_IT,
      'malformed input | malformed-unanswered': UNANSWERED,
      'unknown tool | unknown-tool-wrong-code': UNKNOWN_TOOL_CODE,
    },
    changes: { 'unknown tool': TO_32602, '"warden-not-a-request"': STDIO_NOT_A_REQUEST },
  },
  'server-everything (SDK 1.0, SSE)': {
    findings: {
      'malformed input | request-envelope': CLIENT_SENT_IT,
      'malformed input | parse-error-unanswered': {
        verdict: 'true-positive',
        why: 'a POST that is not JSON got 400 with the text "Invalid message: ..." instead of a JSON-RPC -32700 Parse error',
      },
      'prompts/get (missing) | invalid-params-code': {
        verdict: 'true-positive',
        why: 'server/prompts#error-handling: an invalid prompt name SHOULD be -32602; the server answers -32603 saying the prompt is unknown (a warning)',
      },
      'resources/read (missing) | resource-not-found-code': {
        verdict: 'true-positive',
        why: '2024-11-05 server/resources#error-handling: resource not found is -32002; the server answers -32603',
      },
      'unknown tool | unknown-tool-wrong-code': UNKNOWN_TOOL_CODE,
    },
    changes: {
      'unknown tool': TO_32602,
      'resources/read (missing)': {
        verdict: 'right',
        why: 'the missing resource reaches the client as -32002, what 2024-11-05 asks; message kept, the original code in data',
      },
      'malformed input: not JSON': {
        verdict: 'right',
        why: "request-envelope: block. The proxy answers the body that is not JSON itself, never forwarded: -32700 with id null in the POST's body on HTTP 400, a refusal the SDK's SSEClientTransport throws on as it did on the server's text/plain 400 (an error with id null on the stream, after a 202, matched no request: issue 43)",
      },
      'malformed input: method 42': {
        verdict: 'right',
        why: "request-envelope: block. The proxy answers JSON that is no request itself, never forwarded: the POST is accepted (202) and -32600 with the id it could read comes on the session's stream, where legacy SSE carries answers (the server refused it with a text/plain 400)",
      },
      '"warden-not-a-request"': {
        verdict: 'right',
        why: "the -32600 Invalid Request with the request's readable id, on the session's stream: the proxy's answer to the blocked POST above",
      },
    },
  },
  'server-everything': {
    findings: {
      'malformed input | request-envelope': CLIENT_SENT_IT,
      'malformed input | invalid-request-code': INVALID_REQUEST,
      'unknown tool | unknown-tool-as-iserror': UNKNOWN_TOOL_ISERROR,
    },
    changes: {
      'unknown tool': TO_32602,
      'malformed input: not JSON': BLOCKED_NOT_JSON,
      'malformed input: method 42': BLOCKED_NOT_A_REQUEST,
    },
  },
  'server-filesystem': {
    findings: {
      'malformed input | request-envelope': CLIENT_SENT_IT,
      'malformed input | malformed-unanswered': UNANSWERED,
      'unknown tool | unknown-tool-as-iserror': UNKNOWN_TOOL_ISERROR,
    },
    changes: { 'unknown tool': TO_32602, '"warden-not-a-request"': STDIO_NOT_A_REQUEST },
  },
  'git-mcp-server': {
    findings: {
      'malformed input | request-envelope': CLIENT_SENT_IT,
      'malformed input | parse-error-code': {
        verdict: 'true-positive',
        why: 'JSON-RPC 2.0: a body that does not parse is -32700 Parse error; the server answers -32603',
      },
      'malformed input | invalid-request-code': INVALID_REQUEST,
      'notifications/initialized (no id) | notification-answered-with-body': {
        verdict: 'true-positive',
        why: 'streamable-http#sending-messages-to-the-server: a POST of notifications only is answered 202 Accepted with no body; this one has a 4-byte body',
      },
      'unknown tool | unknown-tool-as-iserror': UNKNOWN_TOOL_ISERROR,
    },
    changes: {
      'unknown tool': TO_32602,
      'malformed input: not JSON': BLOCKED_NOT_JSON,
      'malformed input: method 42': BLOCKED_NOT_A_REQUEST,
    },
  },
  'mcp-proxy (stateless) over server-memory': {
    findings: {
      'malformed input | request-envelope': CLIENT_SENT_IT,
      'malformed input | invalid-request-code': INVALID_REQUEST,
      'unknown tool | unknown-tool-wrong-code': UNKNOWN_TOOL_CODE,
    },
    changes: {
      'unknown tool': TO_32602,
      'malformed input: not JSON': BLOCKED_NOT_JSON,
      'malformed input: method 42': BLOCKED_NOT_A_REQUEST,
    },
  },
  'mcp-time (Go, mcp-go)': {
    findings: { 'malformed input | request-envelope': CLIENT_SENT_IT, 'malformed input | invalid-request-code': INVALID_REQUEST },
    changes: { 'malformed input: not JSON': BLOCKED_NOT_JSON, 'malformed input: method 42': BLOCKED_NOT_A_REQUEST },
  },
  'leanspec (Rust, no SDK)': {
    findings: {
      'malformed input | request-envelope': CLIENT_SENT_IT,
      'malformed input | stdio-not-a-message': {
        verdict: 'true-positive',
        why: 'it answers notifications/initialized with {"jsonrpc":"2.0","result":null}: a notification gets no response, and a response without an id is no JSON-RPC message (stdio: every line is one message)',
      },
      'call get_spec | legacy-range-code': {
        verdict: 'true-positive',
        why: '"spec not found" as -32000: basic/index#error-codes reserves -32000..-32019 (implementation-defined, new implementations should not use it); a warning',
      },
      'call get_spec | tool-failure-as-protocol-error': {
        verdict: 'true-positive',
        why: 'server/tools#error-handling: "spec not found: x" is the tool\'s own failure on its input (a business-logic error, what the model can act on), an isError result, not a JSON-RPC error; a warning',
      },
      'ping | ping-result': {
        verdict: 'true-positive',
        why: 'basic/utilities/ping: the receiver MUST respond promptly with an empty result; the server answers -32601',
      },
      'malformed input | invalid-request-code': {
        verdict: 'true-positive',
        why: 'JSON-RPC 2.0: JSON that is not a valid Request object is -32600 Invalid Request; on stdout the server answers "method": 42 with -32700 (judged on the stream since issue 43)',
      },
    },
    changes: {
      '"warden-not-a-request"': STDIO_NOT_A_REQUEST,
      'an answer without id': {
        verdict: 'right',
        why: 'request-envelope: block. The lines never reach the server, so its own answers (-32700 without any id, no JSON-RPC response) do not come; the proxy answers -32700 (id null) and -32600 (the readable id) as JSON-RPC 2.0 asks',
      },
      'call get_spec': {
        verdict: 'right',
        why: 'the code leaves the reserved range for -32603; message and data kept, the original code in data.originalCode',
      },
    },
  },
  'vaulttools (Rust, rmcp)': {
    findings: {
      'malformed input | request-envelope': CLIENT_SENT_IT,
      'malformed input | malformed-unanswered': UNANSWERED,
      'ping | no-response': {
        verdict: 'true-positive',
        why: 'a line that is not JSON makes the server process exit (JSON-RPC asks for -32700): the ping after it never gets an answer',
      },
    },
    changes: {
      '"warden-not-a-request"': STDIO_NOT_A_REQUEST,
      ping: {
        verdict: 'right',
        why: "the server exited: enforce answers the waiting ping with one JSON-RPC error with its id (audit leaves the pipe's close, as direct)",
      },
    },
  },
};
