// The proxy's own failures, with stable codes. They stay local values until egress turns them into
// a JSON-RPC error (with the request's id) on the HTTP status listed here.

export const PROXY_ERRORS = {
  WARDEN_UPSTREAM_UNREACHABLE: { status: 502, rpcCode: -32603, message: 'Upstream MCP server is unreachable' },
  WARDEN_UPSTREAM_RESET: { status: 502, rpcCode: -32603, message: 'Upstream MCP server closed the connection before responding' },
  WARDEN_UPSTREAM_PROTOCOL: { status: 502, rpcCode: -32603, message: 'Upstream MCP server sent a malformed HTTP response' },
  WARDEN_UPSTREAM_EXITED: { status: 502, rpcCode: -32603, message: 'MCP server process exited before responding' },
  WARDEN_UPSTREAM_TIMEOUT: { status: 504, rpcCode: -32603, message: 'Upstream MCP server did not respond in time' },
  WARDEN_UNKNOWN_SESSION: {
    status: 404,
    rpcCode: -32600,
    message: 'Session not found: no SSE stream of this legacy session passes through the proxy',
  },
  WARDEN_BODY_TOO_LARGE: { status: 413, rpcCode: -32600, message: 'Request body exceeds the size limit' },
  WARDEN_BAD_REQUEST: { status: 400, rpcCode: -32600, message: 'Request could not be read' },
  WARDEN_UNSUPPORTED_ENCODING: { status: 415, rpcCode: -32600, message: 'Request Content-Encoding cannot be read by the proxy' },
  WARDEN_CLIENT_TIMEOUT: { status: 408, rpcCode: -32600, message: 'Request was not received in time' },
  WARDEN_HEADERS_TOO_LARGE: { status: 431, rpcCode: -32600, message: 'Request header fields are too large' },
  WARDEN_FORBIDDEN_HOST: { status: 403, rpcCode: -32600, message: 'Host header not allowed by the proxy' },
  WARDEN_FORBIDDEN_ORIGIN: { status: 403, rpcCode: -32600, message: 'Origin not allowed by the proxy' },
  WARDEN_OVERLOADED: { status: 503, rpcCode: -32603, message: 'Proxy is overloaded; retry later' },
  WARDEN_INTERNAL: { status: 500, rpcCode: -32603, message: 'Internal proxy error' },
} as const satisfies Record<string, { status: number; rpcCode: number; message: string }>;

export type ProxyErrorCode = keyof typeof PROXY_ERRORS;

export class ProxyError extends Error {
  readonly code: ProxyErrorCode;
  readonly status: number;
  readonly rpcCode: number;

  constructor(code: ProxyErrorCode, detail?: string, options?: { cause?: unknown }) {
    super(detail ?? PROXY_ERRORS[code].message, options);
    this.name = 'ProxyError';
    this.code = code;
    this.status = PROXY_ERRORS[code].status;
    this.rpcCode = PROXY_ERRORS[code].rpcCode;
  }
}
