// Explanations of the rules about JSON-RPC framing: envelopes, ids, bodies, batches, stdio lines.
import { HTML_ERROR_PAGE_FRAMEWORKS } from './frameworks.ts';
import type { Explanation } from './types.ts';

const CALL = '→ {"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"export_report","arguments":{}}}';
const INTERNAL = '← {"jsonrpc":"2.0","id":6,"error":{"code":-32603,"message":"Export failed"}}';
const MESSAGES = { text: 'JSON-RPC messages MUST be UTF-8 encoded', from: '2026-07-28' };
const ANSWER_EVERY_REQUEST = {
  text: 'If the body is a JSON-RPC request, the server MUST return either `Content-Type: application/json` (a single JSON object) or `Content-Type: text/event-stream`',
  from: '2026-07-28',
};
const ANSWER_FIX =
  'Answer every request with a JSON-RPC result or error carrying its id, as application/json or text/event-stream; turn a failure into an error response in the MCP handler instead of letting the web framework answer with its own page.';
const NOT_JSON = '→ POST {"jsonrpc":"2.0","id":1,"method":"tools/list"';
const PARSE_ERROR = '← {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}';
const ID_ECHO = {
  text: 'It MUST be the same as the value of the id member in the Request Object.',
  from: 'JSON-RPC 2.0',
};
const STDIO = { text: 'The server MUST NOT write anything to its `stdout` that is not a valid MCP message.', from: '2025-11-25' };

export const FRAMING_EXPLANATIONS: Readonly<Record<string, Explanation>> = {
  'error-shape': {
    why: {
      text: 'Error responses MUST include an `error` field with a `code` and `message`. Error codes MUST be integers.',
      from: '2026-07-28',
    },
    bad: `${CALL}\n← {"jsonrpc":"2.0","id":6,"error":{"code":"E_EXPORT","message":{"text":"failed"}}}`,
    good: `${CALL}\n${INTERNAL}`,
    fix: 'Send error.code as an integer and error.message as a string (one short sentence); put details in error.data.',
  },
  'error-id-null': {
    why: {
      text: 'Error responses MUST include the same ID as the request they correspond to (except in error cases where the ID could not be read due a malformed request)',
      from: '2026-07-28',
    },
    bad: `${CALL}\n← {"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Export failed"}}`,
    good: `${CALL}\n${INTERNAL}`,
    fix: "Answer with the request's id whenever it could be read; a null (or, from 2025-11-25, absent) id is only for a request whose id could not be read.",
  },
  'html-body': {
    why: ANSWER_EVERY_REQUEST,
    bad: `${CALL}\n← HTTP 500 text/html <!DOCTYPE html><html><body><pre>Error: ...</pre></body></html>`,
    good: `${CALL}\n${INTERNAL}`,
    fix: ANSWER_FIX,
    frameworks: HTML_ERROR_PAGE_FRAMEWORKS,
  },
  'empty-body': {
    why: ANSWER_EVERY_REQUEST,
    bad: `${CALL}\n← HTTP 200 application/json (no body)`,
    good: `${CALL}\n${INTERNAL}`,
    fix: ANSWER_FIX,
  },
  'non-json-body': {
    why: ANSWER_EVERY_REQUEST,
    bad: `${CALL}\n← HTTP 500 text/plain Internal Server Error`,
    good: `${CALL}\n${INTERNAL}`,
    fix: ANSWER_FIX,
    frameworks: HTML_ERROR_PAGE_FRAMEWORKS,
  },
  'non-utf8-body': {
    why: MESSAGES,
    bad: `${CALL}\n← {"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"Caf\\xE9"}]}} (Latin-1 bytes)`,
    good: `${CALL}\n← {"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"Café"}]}} (UTF-8)`,
    fix: 'Encode every message as UTF-8 (and say charset=utf-8 if the Content-Type names a charset).',
  },
  'not-jsonrpc-body': {
    why: ANSWER_EVERY_REQUEST,
    bad: `${CALL}\n← {"error":"export failed","status":500}`,
    good: `${CALL}\n${INTERNAL}`,
    fix: ANSWER_FIX,
  },
  'no-response': {
    why: {
      text: 'Result responses MUST include the same ID as the request they correspond to (every request gets a response)',
      from: '2026-07-28',
    },
    bad: `${CALL}\n← (the connection closes, or the SSE stream ends, without a response for id 6)`,
    good: `${CALL}\n${INTERNAL}`,
    fix: 'Always finish a request with its JSON-RPC response; report a failure as an error response (or an isError result), never by dropping the connection or ending the stream.',
  },
  'unaudited-response': {
    why: { text: 'A response larger than limits.auditBody (limits.auditEvent for one SSE event) is relayed unread', from: 'mcp-warden' },
    bad: `${CALL}\n← a 40 MiB result (past --audit-limit): relayed, not judged`,
    good: `${CALL}\n← {"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"resource_link","uri":"file:///exports/report.csv","name":"report.csv"}]}}`,
    fix: 'Raise limits.auditBody / limits.auditEvent (--audit-limit) to judge answers this large, or have the tool return large content as a resource link.',
  },
  'parse-error-code': {
    why: { text: '-32700 Parse error: Invalid JSON was received by the server.', from: 'JSON-RPC 2.0' },
    bad: `${NOT_JSON}\n← {"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Unexpected end of JSON input"}}`,
    good: `${NOT_JSON}\n${PARSE_ERROR}`,
    fix: 'Answer a body that is not JSON with -32700 (Parse error) and a null id.',
  },
  'parse-error-id': {
    why: {
      text: 'If there was an error in detecting the id in the Request object (e.g. Parse error/Invalid Request), it MUST be Null.',
      from: 'JSON-RPC 2.0',
    },
    bad: `${NOT_JSON}\n← {"jsonrpc":"2.0","id":0,"error":{"code":-32700,"message":"Parse error"}}`,
    good: `${NOT_JSON}\n${PARSE_ERROR}`,
    fix: 'Answer a body that could not be parsed with id null (from 2025-11-25 the id may also be left out); never make an id up.',
  },
  'invalid-request-code': {
    why: { text: '-32600 Invalid Request: The JSON sent is not a valid Request object.', from: 'JSON-RPC 2.0' },
    bad: '→ {"jsonrpc":"2.0","id":1,"method":42}\n← {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"method.startsWith is not a function"}}',
    good: '→ {"jsonrpc":"2.0","id":1,"method":42}\n← {"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request"}}',
    fix: 'Answer JSON that is not a valid request (a method that is not a string, jsonrpc other than "2.0", a bad id type) with -32600, and id null when no id could be read.',
  },
  'request-envelope': {
    why: { text: 'jsonrpc: A String specifying the version of the JSON-RPC protocol. MUST be exactly "2.0".', from: 'JSON-RPC 2.0' },
    bad: '→ {"id":1,"method":"tools/list"}',
    good: '→ {"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    fix: 'The client: send every message as JSON-RPC 2.0 ("jsonrpc": "2.0", a string method, an id that is a string or an integer; a notification without an id).',
  },
  'jsonrpc-envelope': {
    why: {
      text: 'Either the result member or error member MUST be included, but both members MUST NOT be included.',
      from: 'JSON-RPC 2.0',
    },
    bad: '← {"jsonrpc":"2.0","id":6,"result":{"content":[]},"error":{"code":-32603,"message":"partly failed"}}',
    good: INTERNAL,
    fix: 'Send {"jsonrpc": "2.0", "id": ...} with exactly one of "result" or "error".',
  },
  'batch-not-allowed': {
    why: { text: 'The body of the HTTP POST MUST be a single JSON-RPC request or notification', from: '2026-07-28' },
    bad: '→ [{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"prompts/list"}]',
    good: '→ {"jsonrpc":"2.0","id":1,"method":"tools/list"}\n→ {"jsonrpc":"2.0","id":2,"method":"prompts/list"} (a POST each)',
    fix: 'The client: send each JSON-RPC message in its own POST (batches exist only in 2025-03-26, and never with initialize).',
  },
  'batch-response-not-allowed': {
    why: ANSWER_EVERY_REQUEST,
    bad: '→ {"jsonrpc":"2.0","id":1,"method":"tools/list"}\n← [{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}]',
    good: '→ {"jsonrpc":"2.0","id":1,"method":"tools/list"}\n← {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}',
    fix: 'Answer a single request with a single JSON-RPC response object, not an array.',
  },
  'batch-duplicate-answer': {
    why: { text: 'A Response object SHOULD exist for each Request object', from: 'JSON-RPC 2.0' },
    bad: '→ [{"jsonrpc":"2.0","id":1,"method":"tools/list"}]\n← [{"jsonrpc":"2.0","id":1,"result":{"tools":[]}},{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x"}}]',
    good: '← [{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}]',
    fix: 'Answer each request of a batch exactly once: one response per request id, in one array.',
  },
  'parse-error-unanswered': {
    why: { text: '-32700 Parse error: Invalid JSON was received by the server.', from: 'JSON-RPC 2.0' },
    bad: `${NOT_JSON}\n← HTTP 400 text/html <h1>Bad Request</h1>`,
    good: `${NOT_JSON}\n← HTTP 400 ${PARSE_ERROR.slice(2)}`,
    fix: 'Answer a body that is not JSON with a JSON-RPC error -32700 (Parse error) and id null, not an empty body or a web page.',
  },
  'answer-id-type': {
    why: ID_ECHO,
    bad: '→ {"jsonrpc":"2.0","id":3,"method":"tools/list"}\n← {"jsonrpc":"2.0","id":"3","result":{"tools":[]}}',
    good: '→ {"jsonrpc":"2.0","id":3,"method":"tools/list"}\n← {"jsonrpc":"2.0","id":3,"result":{"tools":[]}}',
    fix: "Echo the request's id exactly as it came, type included: a number stays a number, a string a string.",
  },
  'answer-foreign-id': {
    why: ID_ECHO,
    bad: '→ POST {"jsonrpc":"2.0","id":3,"method":"tools/list"}\n← {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}',
    good: '← {"jsonrpc":"2.0","id":3,"result":{"tools":[]}}',
    fix: 'Answer each request on the response of the HTTP request that carried it, with its own id; do not share one response slot between concurrent requests.',
  },
  'request-id-in-flight': {
    why: {
      text: 'The request ID MUST NOT match the ID of any other request the sender has issued and not yet received a response for.',
      from: '2026-07-28',
    },
    bad: '→ {"jsonrpc":"2.0","id":1,"method":"tools/call",...}\n→ {"jsonrpc":"2.0","id":1,"method":"tools/list"} (before the first is answered)',
    good: '→ {"jsonrpc":"2.0","id":1,...}\n→ {"jsonrpc":"2.0","id":2,...}',
    fix: 'The client: give every request of a session an id of its own (a counter), never one still awaiting its response.',
  },
  'unreadable-request': {
    why: { text: 'A message nested deeper than 128 levels is more than the proxy reads', from: 'mcp-warden' },
    bad: '→ {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"a":[[[[ ... 200 levels ... ]]]]}}}',
    good: '→ arguments nested a few levels deep',
    fix: "The client: keep arguments shallow; if such depth is expected, raise the proxy's walk bounds in the policy.",
  },
  'unreadable-response': {
    why: { text: 'An answer nested deeper than 128 levels, or with more error text than 1 MiB, is not read in full', from: 'mcp-warden' },
    bad: '← {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"...","data":{"trace":[[[[ ... 200 levels ... ]]]]}}}',
    good: '← {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Export failed"}}',
    fix: "Keep error text and nesting small: a short message, details in the server's log rather than in the answer.",
  },
  'stdio-not-a-message': {
    why: STDIO,
    bad: 'stdout: Weather server ready on stdio\nstdout: {"jsonrpc":"2.0","id":1,"result":{...}}',
    good: 'stderr: Weather server ready on stdio\nstdout: {"jsonrpc":"2.0","id":1,"result":{...}}',
    fix: 'Write only JSON-RPC messages to stdout, one per line; send logs, banners and prints to stderr.',
  },
  'stdio-embedded-newline': {
    why: { text: 'Messages are delimited by newlines, and MUST NOT contain embedded newlines.', from: '2025-11-25' },
    bad: 'stdout: {\nstdout:   "jsonrpc": "2.0",\nstdout:   "id": 1, ...',
    good: 'stdout: {"jsonrpc":"2.0","id":1,"result":{}}',
    fix: 'Serialise each message without indentation (JSON.stringify(message), json.dumps(message)) and end it with one newline.',
  },
  'malformed-unanswered': {
    why: {
      text: 'When a rpc call is made, the Server MUST reply with a Response ... If there was an error in detecting the id in the Request object (e.g. Parse error/Invalid Request), it MUST be Null.',
      from: 'JSON-RPC 2.0',
    },
    bad: '→ (stdin) not json\n← (nothing, or the server exits)',
    good: '→ (stdin) not json\n← {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
    fix: 'Answer a line (or legacy POST) that is not JSON with -32700, and JSON that is no valid request with -32600, id null when it cannot be read; keep the session going.',
  },
};
