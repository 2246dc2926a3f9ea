// Where clients reach the proxy, and the rewrites that make OAuth discovery point there: an OAuth
// client compares the protected-resource metadata's `resource` with the URL it connected to, and
// follows `resource_metadata` from WWW-Authenticate, so both must name the proxy, not the upstream.
import type { IncomingMessage } from 'node:http';
import { TLSSocket } from 'node:tls';
import { firstValue } from '../mcp/headers.ts';

export interface PublicOriginOptions {
  /** Believe X-Forwarded-Proto (only behind a trusted TLS terminator). */
  trustForwarded?: boolean;
}

/** The origin clients use for the proxy: the configured URL, else the request's scheme and Host. */
export function publicOrigin(req: IncomingMessage, configured?: URL, options: PublicOriginOptions = {}): string {
  if (configured) return configured.origin;
  let scheme = req.socket instanceof TLSSocket ? 'https' : 'http';
  const forwarded = firstValue(req.headers['x-forwarded-proto'])?.split(',')[0]?.trim().toLowerCase();
  if (options.trustForwarded && (forwarded === 'http' || forwarded === 'https')) scheme = forwarded;
  const host = req.headers.host;
  // A Host that is not a bare authority (missing, or smuggling a path) falls back to our socket.
  if (host && /^[^\s/?#@\\]+$/.test(host)) {
    try {
      return new URL(`${scheme}://${host}`).origin;
    } catch {
      // fall through
    }
  }
  const { localAddress, localPort } = req.socket;
  const addr = localAddress?.includes(':') ? `[${localAddress}]` : localAddress;
  return new URL(`${scheme}://${addr ?? 'localhost'}:${localPort ?? ''}`).origin;
}

/** Replaces the origin of an absolute URL when it is exactly `upstreamOrigin`; path, query and fragment stay byte for byte. */
export function rebaseUrl(value: string, upstreamOrigin: string, publicOrigin: string): string {
  const authority = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(value);
  if (!authority) return value;
  try {
    if (new URL(authority[0]).origin !== upstreamOrigin) return value;
  } catch {
    return value;
  }
  return publicOrigin + value.slice(authority[0].length);
}

// A quoted-string is consumed whole so a `resource_metadata=` inside another parameter's value is never touched.
const CHALLENGE_PARAM = /"(?:[^"\\]|\\.)*"|(?<=^|[\s,])(resource_metadata\s*=\s*)(?:"((?:[^"\\]|\\.)*)"|([^\s,"]+))/gi;

/** Rebases every `resource_metadata` parameter (quoted or token) in a WWW-Authenticate value. */
export function rewriteWwwAuthenticate(header: string, upstreamOrigin: string, publicOrigin: string): string {
  return header.replace(CHALLENGE_PARAM, (match, name?: string, quoted?: string, token?: string) => {
    if (name === undefined) return match;
    if (token !== undefined) return name + rebaseUrl(token, upstreamOrigin, publicOrigin);
    const url = (quoted ?? '').replace(/\\(.)/g, '$1');
    const rebased = rebaseUrl(url, upstreamOrigin, publicOrigin);
    return rebased === url ? match : `${name}"${rebased.replace(/["\\]/g, '\\$&')}"`;
  });
}

/** Paths on the upstream that `resource_metadata` parameters of a WWW-Authenticate value point to. */
export function metadataPaths(header: string, upstreamOrigin: string): string[] {
  const out: string[] = [];
  for (const m of header.matchAll(CHALLENGE_PARAM)) {
    const url = m[1] === undefined ? undefined : (m[2]?.replace(/\\(.)/g, '$1') ?? m[3]);
    if (url === undefined) continue;
    try {
      const parsed = new URL(url);
      if (parsed.origin === upstreamOrigin) out.push(parsed.pathname);
    } catch {
      // not a URL: nothing to serve
    }
  }
  return out;
}

/**
 * Where the upstream's protected-resource metadata lives besides `/.well-known/`: learned from the
 * challenges the proxy rebased (RFC 9728 §5.1 lets a server name any URL), bounded.
 */
export class MetadataLocations {
  private readonly paths = new Set<string>();

  constructor(private readonly max = 64) {}

  learn(header: string | string[], upstreamOrigin: string): void {
    for (const value of Array.isArray(header) ? header : [header]) {
      for (const path of metadataPaths(value, upstreamOrigin)) {
        this.paths.delete(path);
        this.paths.add(path);
        if (this.paths.size > this.max) this.paths.delete(this.paths.values().next().value!);
      }
    }
  }

  has(path: string): boolean {
    return this.paths.has(path);
  }
}

/**
 * Rebases the `resource` field of an RFC 9728 protected-resource metadata document. Undefined when
 * the body is not a JSON object or nothing changed, so the caller forwards the original bytes.
 */
export function rewriteResourceMetadata(body: Buffer, upstreamOrigin: string, publicOrigin: string): Buffer | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return undefined;
  const record = doc as Record<string, unknown>;
  if (typeof record.resource !== 'string') return undefined;
  const rebased = rebaseUrl(record.resource, upstreamOrigin, publicOrigin);
  if (rebased === record.resource) return undefined;
  record.resource = rebased;
  return Buffer.from(JSON.stringify(record), 'utf8');
}
