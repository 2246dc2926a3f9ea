// Explanations of the rules about the transport, the lifecycle and the 2026-07-28 result shapes.
import type { Explanation } from './types.ts';

const MODERN_CALL = '→ {"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{...}}}';
const RESULT_TYPE = { text: 'The `result` MUST include a `resultType` field to indicate the type of the result.', from: '2026-07-28' };
const MRTR_ONLY = { text: 'Servers MUST NOT send `InputRequiredResult` responses on any other client requests.', from: '2026-07-28' };

export const PROTOCOL_EXPLANATIONS: Readonly<Record<string, Explanation>> = {
  'notification-answered-with-body': {
    why: { text: 'If the server accepts it, the server MUST return HTTP status code `202 Accepted` with no body.', from: '2026-07-28' },
    bad: '→ POST {"jsonrpc":"2.0","method":"notifications/initialized"}\n← HTTP 200 {"jsonrpc":"2.0","result":{}}',
    good: '→ POST {"jsonrpc":"2.0","method":"notifications/initialized"}\n← HTTP 202 (no body)',
    fix: 'Accept a POST of only notifications (or responses) with HTTP 202 and an empty body; reject it with a 4xx, optionally with an id-less JSON-RPC error.',
  },
  'response-content-type': {
    why: {
      text: 'the server MUST return either `Content-Type: application/json` (a single JSON object) or `Content-Type: text/event-stream`',
      from: '2026-07-28',
    },
    bad: '→ POST {"jsonrpc":"2.0","id":1,"method":"tools/list"}\n← HTTP 200 Content-Type: text/plain {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}',
    good: '← HTTP 200 Content-Type: application/json {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}',
    fix: "Send a request's answer with Content-Type: application/json (one JSON object) or text/event-stream (an SSE stream).",
  },
  'accept-header': {
    why: {
      text: 'The client MUST include an `Accept` header listing both `application/json` and `text/event-stream` as supported content types.',
      from: '2026-07-28',
    },
    bad: '→ POST Accept: application/json {"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    good: '→ POST Accept: application/json, text/event-stream {"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    fix: 'The client: send Accept: application/json, text/event-stream on every POST.',
  },
  'legacy-version-header': {
    why: { text: 'If using HTTP, the client MUST include the `MCP-Protocol-Version: <protocol-version>` HTTP header', from: '2025-11-25' },
    bad: '(initialize negotiated 2025-11-25)\n→ POST {"jsonrpc":"2.0","id":2,"method":"tools/list"} (no MCP-Protocol-Version)',
    good: '→ POST MCP-Protocol-Version: 2025-11-25 {"jsonrpc":"2.0","id":2,"method":"tools/list"}',
    fix: 'The client: after initialize, send MCP-Protocol-Version with the negotiated version on every request.',
  },
  'session-id-invalid': {
    why: { text: 'The session ID MUST only contain visible ASCII characters (ranging from 0x21 to 0x7E).', from: '2025-11-25' },
    bad: '← HTTP 200 Mcp-Session-Id: session 1 é',
    good: '← HTTP 200 Mcp-Session-Id: 1868a90c-5e2b-4b5f-9c3a-0e6c2d1f8a77',
    fix: 'Issue session ids of visible ASCII only, e.g. a random UUID or base64url of 16+ random bytes.',
  },
  'initialize-version': {
    why: {
      text: 'If the server supports the requested protocol version, it MUST respond with the same version. Otherwise, the server MUST respond with another protocol version it supports.',
      from: '2025-11-25',
    },
    bad: '→ {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",...}}\n← {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"1.0",...}}',
    good: '← {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25",...}}',
    fix: "Answer initialize with the client's proposed version when supported, else the latest version the server supports; never a version string no spec defines.",
  },
  'ping-result': {
    why: { text: 'The receiver MUST respond promptly with an empty response', from: '2025-11-25' },
    bad: '→ {"jsonrpc":"2.0","id":9,"method":"ping"}\n← {"jsonrpc":"2.0","id":9,"result":{"status":"ok"}}',
    good: '→ {"jsonrpc":"2.0","id":9,"method":"ping"}\n← {"jsonrpc":"2.0","id":9,"result":{}}',
    fix: 'Answer ping with an empty result {}.',
  },
  'result-type-legacy': {
    why: { text: 'A `resultType` of `"input_required"` indicates the request is incomplete (a 2026-07-28 construct)', from: '2026-07-28' },
    bad: '(session negotiated 2025-11-25)\n← {"jsonrpc":"2.0","id":4,"result":{"resultType":"input_required","inputRequests":{...}}}',
    good: '← (2025-11-25: ask with an elicitation/create request, then answer with the final result)',
    fix: 'Answer a legacy-version request with its final result; ask for input with server-to-client requests such as elicitation/create.',
  },
  'missing-request-meta': {
    why: {
      text: 'A request missing any required field is malformed; the server MUST reject it with JSON-RPC error code `-32602` (Invalid params).',
      from: '2026-07-28',
    },
    bad: '→ {"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}',
    good: '→ {"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}',
    fix: 'The client: send _meta io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities on every 2026-07-28 request.',
  },
  'header-mismatch': {
    why: {
      text: 'Every POST request to the MCP endpoint MUST include an `MCP-Protocol-Version` header. The header value MUST match the `io.modelcontextprotocol/protocolVersion` field',
      from: '2026-07-28',
    },
    bad: '→ POST Mcp-Method: tools/list {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x",...}}',
    good: '→ POST MCP-Protocol-Version: 2026-07-28, Mcp-Method: tools/call, Mcp-Name: x {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x",...}}',
    fix: 'The client: mirror the body into MCP-Protocol-Version, Mcp-Method and Mcp-Name on every POST (Base64 sentinel for values that are not plain ASCII).',
  },
  'result-type-missing': {
    why: RESULT_TYPE,
    bad: `${MODERN_CALL}\n← {"jsonrpc":"2.0","id":2,"result":{"tools":[],"ttlMs":0,"cacheScope":"public"}}`,
    good: `${MODERN_CALL}\n← {"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[],"ttlMs":0,"cacheScope":"public"}}`,
    fix: 'Send every 2026-07-28 result with "resultType": "complete" (or "input_required" for an InputRequiredResult).',
  },
  'result-type-unknown': {
    why: { text: 'A `resultType` of any value unrecognized by the client MUST be considered invalid.', from: '2026-07-28' },
    bad: `${MODERN_CALL}\n← {"jsonrpc":"2.0","id":2,"result":{"resultType":"done",...}}`,
    good: `${MODERN_CALL}\n← {"jsonrpc":"2.0","id":2,"result":{"resultType":"complete",...}}`,
    fix: 'Use "complete" for a final result or "input_required" for an InputRequiredResult (other values only for an extension the client advertised).',
  },
  'input-required-not-allowed': {
    why: MRTR_ONLY,
    bad: `${MODERN_CALL}\n← {"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required","inputRequests":{...}}}`,
    good: `${MODERN_CALL}\n← {"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[],...}}`,
    fix: 'Send an InputRequiredResult only to tools/call, prompts/get or resources/read, with inputRequests or requestState; answer any other request with a complete result or an error.',
  },
  'input-requests-shape': {
    why: {
      text: '`inputRequests` values are request objects that MUST be one of ElicitRequest, CreateMessageRequest, or ListRootsRequest',
      from: '2026-07-28',
    },
    bad: '← {"result":{"resultType":"input_required","inputRequests":{"q":{"method":"ask_user","params":{}}}}}',
    good: '← {"result":{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"Which account?","requestedSchema":{...}}}}}}',
    fix: 'Put only elicitation/create, sampling/createMessage or roots/list request objects in inputRequests, keyed by ids of your own.',
  },
  'caching-hints': {
    why: { text: 'Servers MUST provide a `ttlMs` value that is `>= 0`.', from: '2026-07-28' },
    bad: `${MODERN_CALL}\n← {"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[]}}`,
    good: `${MODERN_CALL}\n← {"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[],"ttlMs":60000,"cacheScope":"public"}}`,
    fix: 'Add "ttlMs" (an integer ≥ 0) and "cacheScope" ("public" or "private") to every complete server/discover, list and resources/read result.',
  },
  'removed-method': {
    why: { text: 'Remove `ping`, `logging/setLevel`, and `notifications/roots/list_changed`.', from: '2026-07-28 changelog' },
    bad: '→ {"jsonrpc":"2.0","id":5,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",...}}}\n← {"jsonrpc":"2.0","id":5,"result":{}}',
    good: '← HTTP 404 {"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"Method not found"}}',
    fix: 'Answer a 2026-07-28 request for a removed method (initialize, ping, logging/setLevel, resources/(un)subscribe, tasks/*) with HTTP 404 and -32601.',
  },
  'session-id-minted': {
    why: { text: 'An `Mcp-Session-Id` header on a request: ignore it, and do not mint or echo session IDs.', from: '2026-07-28' },
    bad: `${MODERN_CALL}\n← HTTP 200 Mcp-Session-Id: 4f1c... {...}`,
    good: `${MODERN_CALL}\n← HTTP 200 (no Mcp-Session-Id) {...}`,
    fix: 'Do not set Mcp-Session-Id on 2026-07-28 answers; carry state in explicit handles or arguments.',
  },
  'client-response-not-allowed': {
    why: {
      text: 'The body of the HTTP POST MUST be a single JSON-RPC request or notification. The client MUST NOT send JSON-RPC responses.',
      from: '2026-07-28',
    },
    bad: '→ POST {"jsonrpc":"2.0","id":"q1","result":{"action":"accept"}}',
    good: '→ POST the original request again, with params.inputResponses {"q1": {...}}',
    fix: 'The client: answer input requests by retrying the original request with inputResponses (MRTR), never with a JSON-RPC response.',
  },
  'cancelled-over-http': {
    why: { text: 'Closing the SSE response stream MUST be treated by the server as cancellation of that request.', from: '2026-07-28' },
    bad: '→ POST {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}',
    good: '→ (close the SSE response stream of request 4, or abort its HTTP request)',
    fix: "The client: cancel by closing the request's SSE response stream (or aborting the HTTP request) instead of sending notifications/cancelled.",
  },
  'initialize-version-error': {
    why: {
      text: 'If the server supports the requested protocol version, it MUST respond with the same version. Otherwise, the server MUST respond with another protocol version it supports.',
      from: '2025-11-25',
    },
    bad: '→ {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1.0.0",...}}\n← {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Unsupported protocol version"}}',
    good: '← {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25",...}}\n  or, refusing: {"code":-32602,"message":"Unsupported protocol version","data":{"supported":["2025-11-25"],"requested":"1.0.0"}}',
    fix: "Answer initialize with a version the server supports and let the client decide; if it must refuse, use -32602 with data {supported, requested}, as the spec's example does.",
  },
  'server-request-without-capability': {
    why: {
      text: 'Both parties MUST: Only use capabilities that were successfully negotiated',
      from: '2025-11-25',
    },
    bad: '→ initialize {"capabilities":{}}\n← (server to client) {"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{...}}',
    good: '→ initialize {"capabilities":{"sampling":{}}}\n← (server to client) {"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{...}}\n  (or, without it: the tool answers without sampling)',
    fix: "Check the client's declared capabilities (sampling, elicitation, roots) before sending it such a request; without them, answer the tool call another way.",
  },
};
