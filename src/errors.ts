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
  WARDEN_FORBIDDEN_PEER: { status: 403, rpcCode: -32600, message: 'Peer token not accepted' },
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

/**
 * What lay under a proxy error, for an operator's log: the first cause's code and message
 * (`ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9`), bounded; undefined when there is none.
 */
export function causeOf(err: Error): string | undefined {
  let cause: unknown = err.cause;
  // undici wraps a socket's error in its own: the innermost one with a code names it best.
  for (let depth = 0; depth < 5 && cause instanceof Error && cause.cause instanceof Error; depth++) {
    if ((cause as NodeJS.ErrnoException).code !== undefined && !(cause.cause as NodeJS.ErrnoException).code) break;
    cause = cause.cause;
  }
  if (!(cause instanceof Error)) return undefined;
  const code = (cause as NodeJS.ErrnoException).code;
  const text = code && !cause.message.startsWith(code) ? `${code}: ${cause.message}` : cause.message || code;
  return text ? text.slice(0, 300) : undefined;
}
