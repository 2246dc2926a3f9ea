// Which requests are MCP traffic. JSON-RPC is MCP traffic by what it is, not by where it arrives:
// the configured endpoint's path always is; on any other path a POST whose body turns out to be
// JSON-RPC is too (its body decides, see isJsonRpc), and so are the GET and DELETE of a path that
// carried JSON-RPC, a GET that asks for an SSE stream and a request naming an MCP session. A
// policy may scope paths out (`scope.passthrough`): those go through the pass-through, counted.
import type { IncomingMessage } from 'node:http';
import type { Decoded } from '../codec/json-body.ts';
import { H } from '../mcp/headers.ts';
import { canonicalPath, targetPath } from './target.ts';

/**
 * - `endpoint`: the configured MCP endpoint, a learned legacy message path, or a request that is
 *   MCP traffic by its headers: judged.
 * - `sniff`: a POST whose body decides: judged if it is JSON-RPC, else passed through as it came.
 * - `scoped-out`: MCP-looking traffic on a path the policy relays unjudged.
 * - `json-post`: a JSON POST too large to sniff (its declared length is past the request limit):
 *   relayed unread, said so.
 * - `passthrough`: anything else.
 */
export type Route = 'endpoint' | 'sniff' | 'scoped-out' | 'json-post' | 'passthrough';

/** Distinct paths remembered as carrying JSON-RPC (the newest). */
const MAX_LEARNED = 256;

/** Whether a decoded body is JSON-RPC: an object (or a batch holding one) with a `jsonrpc` member. */
export function isJsonRpc(decoded: Decoded): boolean {
  if (!decoded.ok) return false;
  return decoded.payload.messages.some((m) => typeof m.value === 'object' && m.value !== null && 'jsonrpc' in m.value);
}

/** A POST whose headers do not rule out JSON: JSON, none, text, or an MCP client's Accept. */
function mayCarryJson(req: IncomingMessage): boolean {
  const type = String(req.headers['content-type'] ?? '').toLowerCase();
  return (
    type === '' || type.includes('json') || type.startsWith('text/plain') || String(req.headers.accept ?? '').includes('text/event-stream')
  );
}

/** Whether a request looks like MCP traffic by its headers alone (a GET stream, a session id). */
function mcpByHeaders(req: IncomingMessage): boolean {
  if (req.headers[H.sessionId] !== undefined) return true;
  return (
    req.method === 'GET' &&
    String(req.headers.accept ?? '')
      .toLowerCase()
      .includes('text/event-stream')
  );
}

/** A path pattern of `scope.passthrough`: exact, or a prefix ending in `*` (canonical forms compared). */
export function scopeMatcher(patterns: readonly string[]): (path: string) => boolean {
  if (patterns.length === 0) return () => false;
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const p of patterns) {
    if (p.endsWith('*')) prefixes.push(canonicalPath(p.slice(0, -1)).replace(/\/$/, ''));
    else exact.add(canonicalPath(p));
  }
  return (path) => {
    const c = canonicalPath(path);
    return exact.has(c) || prefixes.some((p) => c === p || c.startsWith(`${p}/`) || (p === '' && c.startsWith('/')));
  };
}

export class McpRouter {
  /** Canonical paths where JSON-RPC came, newest last. */
  private readonly learned = new Set<string>();

  constructor(
    private readonly isEndpoint: (target: string) => boolean,
    private readonly isLegacyMessage: (target: string) => boolean,
    /** The policy's scoped-out paths, read per request (a reload changes them). */
    private readonly scopedPatterns: () => readonly string[],
    private readonly maxBodyBytes: number,
  ) {}

  route(req: IncomingMessage): Route {
    const target = req.url ?? '/';
    if (this.isEndpoint(target)) return 'endpoint';
    const method = req.method;
    if (method !== 'POST' && method !== 'GET' && method !== 'DELETE') return 'passthrough';
    const path = targetPath(target);
    const mcp =
      method === 'POST'
        ? this.isLegacyMessage(target) || this.learned.has(canonicalPath(path))
        : this.learned.has(canonicalPath(path)) || mcpByHeaders(req);
    const maybe = mcp || (method === 'POST' && mayCarryJson(req));
    if (!maybe) return 'passthrough';
    if (this.scopedOut(path)) return 'scoped-out';
    if (mcp) return 'endpoint';
    // A body past the request limit is not read to be sniffed: it goes on as it came.
    const declared = Number(req.headers['content-length']);
    if (!(Number.isFinite(declared) && declared > this.maxBodyBytes)) return 'sniff';
    return String(req.headers['content-type'] ?? '').includes('json') ? 'json-post' : 'passthrough';
  }

  /** The policy's patterns, compiled once per list (a policy is frozen; a reload brings a new list). */
  private matcher: { of: readonly string[]; match: (path: string) => boolean } | undefined;

  /** Whether the policy relays `path` unjudged (`scope.passthrough`). */
  scopedOut(path: string): boolean {
    const patterns = this.scopedPatterns();
    if (this.matcher?.of !== patterns) this.matcher = { of: patterns, match: scopeMatcher(patterns) };
    return this.matcher.match(path);
  }

  /** A POST on `target` carried JSON-RPC: its path's GET and DELETE are MCP traffic from now on. */
  learn(target: string): void {
    const path = canonicalPath(targetPath(target));
    this.learned.delete(path);
    this.learned.add(path);
    if (this.learned.size > MAX_LEARNED) this.learned.delete(this.learned.values().next().value!);
  }
}
