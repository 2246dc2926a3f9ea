// Explanations of the rules about error codes, their data and the HTTP status that goes with them.
import { TRANSPORT_CODE_FRAMEWORKS } from './frameworks.ts';
import type { Explanation } from './types.ts';

const CALL = '→ {"jsonrpc":"2.0","id":7,"method":"resources/list"}';

export const CODE_EXPLANATIONS: Readonly<Record<string, Explanation>> = {
  'reserved-code': {
    why: {
      text: 'Implementations MUST NOT emit any code from this sub-range that is not defined by this specification',
      from: '2026-07-28',
    },
    bad: `${CALL}\n← {"jsonrpc":"2.0","id":7,"error":{"code":-32050,"message":"Backend down"}}`,
    good: `${CALL}\n← {"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"Backend down"}}`,
    fix: 'Use the code the spec defines for the case (-32602 invalid params, -32601 method not found, -32603 internal error), or an application code outside -32768..-32000.',
  },
  'legacy-range-code': {
    why: {
      text: 'new implementations SHOULD NOT use codes from this sub-range at all. Apart from `-32002` (see below), receivers MUST NOT assume any specific meaning for these codes',
      from: '2026-07-28',
    },
    bad: `${CALL}\n← {"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"Not supported"}}`,
    good: `${CALL}\n← {"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}}`,
    fix: 'Replace -32000..-32019 with the code the spec defines for the case (-32602, -32601, -32603), or an application code outside -32768..-32000.',
    frameworks: TRANSPORT_CODE_FRAMEWORKS,
  },
  'retired-code': {
    why: { text: 'Implementations of this protocol version MUST NOT emit these codes: `-32002` ... `-32042`', from: '2026-07-28' },
    bad: '→ {"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"fetch","arguments":{}}}\n← {"jsonrpc":"2.0","id":8,"error":{"code":-32042,"message":"Open this URL"}}',
    good: '← {"jsonrpc":"2.0","id":8,"error":{"code":-32603,"message":"Authorization required"}}',
    fix: "Use a code of the session's version: -32002 only for resources/read up to 2025-11-25, -32042 only under 2025-11-25; otherwise -32602 or -32603.",
  },
  'resource-not-found-code': {
    why: { text: 'Resource not found ... code `-32602` (Invalid Params)', from: '2026-07-28' },
    bad: '→ {"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"file:///missing"}}\n← {"jsonrpc":"2.0","id":9,"error":{"code":-32603,"message":"not found"}}',
    good: '← {"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"Resource not found","data":{"uri":"file:///missing"}}}\n  (up to 2025-11-25: code -32002)',
    fix: 'Answer resources/read of a resource that does not exist with -32602 under 2026-07-28 and -32002 before it, with data {uri}; never with an empty contents array.',
  },
  'error-data-required': {
    why: { text: 'UnsupportedProtocolVersionError ... data: { supported: string[]; requested: string }', from: '2026-07-28' },
    bad: '← {"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version"}}',
    good: '← {"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2027-01-01"}}}',
    fix: "Send the data the code's schema requires: -32022 {supported, requested}, -32021 {requiredCapabilities}, -32042 {elicitations}.",
  },
  'unknown-method-wrong-code': {
    why: { text: '-32601 Method not found: The method does not exist / is not available.', from: 'JSON-RPC 2.0' },
    bad: `${CALL}\n← {"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"Not supported"}}`,
    good: `${CALL}\n← {"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}}`,
    fix: 'Answer a method the server does not implement, or one of a capability it did not declare, with -32601 (and HTTP 404 under 2026-07-28); or declare the capability and serve it.',
  },
  'unknown-method-status': {
    why: {
      text: 'If the server does not implement the requested RPC method, it MUST respond with `404 Not Found` and a JSON-RPC error with code `-32601`',
      from: '2026-07-28',
    },
    bad: '→ POST {"jsonrpc":"2.0","id":7,"method":"prompts/list",...}\n← HTTP 200 {"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}}',
    good: '← HTTP 404 {"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}}',
    fix: "Send a 2026-07-28 -32601 answer with HTTP 404 (the JSON-RPC body tells it apart from a legacy server's 404).",
  },
  'error-status-pairing': {
    why: {
      text: 'When rejecting a request due to header validation failure, servers MUST return HTTP status `400 Bad Request`',
      from: '2026-07-28',
    },
    bad: '← HTTP 200 {"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch"}}',
    good: '← HTTP 400 {"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch"}}',
    fix: 'Send -32020, -32021, -32022 and the -32602 of a request missing its required _meta with HTTP 400.',
  },
  'server-discover-missing': {
    why: { text: 'Servers MUST implement `server/discover`', from: '2026-07-28' },
    bad: '→ {"jsonrpc":"2.0","id":1,"method":"server/discover",...}\n← HTTP 404 {"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}',
    good: '← {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":60000,"cacheScope":"public"}}',
    fix: 'Implement server/discover: return supportedVersions, capabilities, ttlMs and cacheScope with resultType "complete".',
  },
  'unsupported-version-code': {
    why: {
      text: 'If the server does not implement the requested protocol version ... it MUST respond with `400 Bad Request` and an UnsupportedProtocolVersionError',
      from: '2026-07-28',
    },
    bad: '→ MCP-Protocol-Version: 2027-01-01 {"jsonrpc":"2.0","id":1,"method":"tools/list",...}\n← HTTP 400 {"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Bad version"}}',
    good: '← HTTP 400 {"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2027-01-01"}}}',
    fix: 'Turn a version the server does not implement away with HTTP 400 and -32022 {supported, requested}.',
  },
  'unknown-method-generic-error': {
    why: {
      text: '-32601 Method not found: The method does not exist / is not available. -32600 Invalid Request: The JSON sent is not a valid Request object.',
      from: 'JSON-RPC 2.0',
    },
    bad: '→ {"jsonrpc":"2.0","id":7,"method":"no/such_method"}\n← {"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"Internal error"}}',
    good: '← {"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}}',
    fix: 'Answer a method the server does not implement with -32601 (and HTTP 404 under 2026-07-28); -32600 is for a body that is no Request object, and an extension method that fails should say why in its message.',
  },
  'method-not-found-on-404': {
    why: {
      text: 'When a client receives HTTP 404 in response to a request containing an `Mcp-Session-Id`, it MUST start a new session by sending a new `InitializeRequest`',
      from: '2025-11-25',
    },
    bad: '→ POST Mcp-Session-Id: abc {"jsonrpc":"2.0","id":7,"method":"no/such_method"}\n← HTTP 404 {"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}}',
    good: '← HTTP 200 {"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}}',
    fix: 'Before 2026-07-28, send -32601 on HTTP 200 and keep 404 for a session the server no longer has; only 2026-07-28 pairs -32601 with 404.',
  },
  'missing-meta-served': {
    why: {
      text: 'Every request carries _meta io.modelcontextprotocol/protocolVersion and clientCapabilities; a server receiving a request without them replies -32602, with HTTP 400 over HTTP',
      from: '2026-07-28',
    },
    bad: '→ POST MCP-Protocol-Version: 2026-07-28 {"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}\n← HTTP 200 {"jsonrpc":"2.0","id":4,"result":{"tools":[...],"resultType":"complete"}}',
    good: '← HTTP 400 {"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Missing required _meta: io.modelcontextprotocol/protocolVersion"}}',
    fix: 'Check each 2026-07-28 request for its protocolVersion and clientCapabilities in params._meta before serving it, and refuse one without them with -32602 on HTTP 400.',
  },
  'invalid-params-code': {
    why: {
      text: 'Invalid prompt name: -32602 (Invalid params) ... Invalid log level: -32602 (Invalid params) ... Invalid cursors SHOULD result in an error with code -32602 (Invalid params).',
      from: '2025-11-25',
    },
    bad: '→ {"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"nope"}}\n← {"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Prompt nope not found"}}',
    good: '← {"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Unknown prompt: nope"}}',
    fix: 'Answer prompts/get of a prompt the server does not have, logging/setLevel with a level RFC 5424 does not define, and a cursor the server cannot read (malformed, expired), with -32602 (Invalid params).',
  },
  'propagated-client-error': {
    why: { text: 'The error object ... code: A Number that indicates the error type that occurred', from: 'JSON-RPC 2.0' },
    bad: '← (server to client) {"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage",...}\n→ {"jsonrpc":"2.0","id":"s1","error":{"code":-32601,"message":"Method not found"}}\n← (answer to tools/call) {"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"Method not found"}}',
    good: '← {"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"This tool needs sampling, which the client does not offer"}],"isError":true}}',
    fix: "Handle the client's error to your own request inside the tool: say what failed in an isError result (or -32603), not with the client's code, which describes another request.",
  },
};
