// Header names the MCP transports define (lower case, as node:http exposes them).

export const H = {
  sessionId: 'mcp-session-id',
  protocolVersion: 'mcp-protocol-version',
  method: 'mcp-method',
  name: 'mcp-name',
  paramPrefix: 'mcp-param-',
  lastEventId: 'last-event-id',
  wwwAuthenticate: 'www-authenticate',
} as const;

/** Hop-by-hop headers (RFC 9110 §7.6.1) plus the ones node recomputes; never forwarded. */
export const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);
