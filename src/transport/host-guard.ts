// The proxy's own DNS-rebinding guard: which Host and Origin values a request may carry. A browser
// page on evil.example that resolves its name to 127.0.0.1 sends `Host: evil.example` and
// `Origin: http://evil.example`; a proxy on a loopback address must refuse both, as the MCP spec
// asks of a local server (Streamable HTTP, "Security Warning"). The upstream's own check still
// sees the client's Host and Origin: the proxy forwards them unchanged.
import { isIP } from 'node:net';
import { clip } from '../util/clip.ts';

export interface HostGuardOptions {
  /** Host names (optionally with :port) a request may name; '*' allows any. */
  allowedHosts?: readonly string[];
  /** Origins (scheme://host[:port]) a request may come from; '*' allows any. A request without Origin is always allowed. */
  allowedOrigins?: readonly string[];
}

export interface HostGuard {
  /** Why a request is refused ('host' or 'origin'), or undefined when it may pass. */
  check(host: string | undefined, origin: string | undefined): 'host' | 'origin' | undefined;
  /** What the guard allows, for the startup log. */
  describe(): { allowedHosts: string[] | '*'; allowedOrigins: string[] | '*' };
}

/** The names a loopback listener answers to by default. */
export const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** Whether a listen address only accepts connections from this machine. */
export function isLoopbackAddress(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

/** `host[:port]` lower-cased, IPv6 in brackets; undefined when the value is not an authority. */
export function splitAuthority(value: string): { name: string; port: string | undefined } | undefined {
  const m = /^(\[[0-9a-f:.]+\]|[^\s:/?#@[\]\\]+)(?::(\d{1,5}))?$/i.exec(value.trim());
  if (!m) return undefined;
  return { name: m[1]!.toLowerCase().replace(/\.$/, ''), port: m[2] };
}

/** An allow-list entry matches a name, and the port too when the entry names one. */
function hostMatcher(entries: readonly string[]): ((authority: string) => boolean) | undefined {
  if (entries.includes('*')) return undefined;
  const parsed = entries.map(splitAuthority).filter((e) => e !== undefined);
  return (authority) => {
    const got = splitAuthority(authority);
    return got !== undefined && parsed.some((e) => e.name === got.name && (e.port === undefined || e.port === (got.port ?? '')));
  };
}

function originMatcher(entries: readonly string[]): ((origin: string) => boolean) | undefined {
  if (entries.includes('*')) return undefined;
  const origins = new Set(entries.map(normalOrigin).filter((o) => o !== undefined));
  return (origin) => {
    const o = normalOrigin(origin);
    return o !== undefined && origins.has(o);
  };
}

/** scheme://host[:port] as the URL standard serialises it (default ports dropped), or undefined. */
function normalOrigin(value: string): string | undefined {
  try {
    const url = new URL(value);
    return url.origin === 'null' ? undefined : url.origin;
  } catch {
    return undefined;
  }
}

/**
 * The guard for a listener. Configured lists win; without them a loopback listener allows only
 * loopback names (any port) and origins on loopback names, and any other listener allows all
 * (a public deployment names its hosts: the README says so).
 */
export function createHostGuard(options: HostGuardOptions, listenHost: string): HostGuard {
  const loopback = isLoopbackAddress(listenHost);
  const hosts = options.allowedHosts ?? (loopback ? LOOPBACK_NAMES : ['*']);
  const origins = options.allowedOrigins ?? (loopback ? LOOPBACK_NAMES.flatMap((n) => [`http://${n}`, `https://${n}`]) : ['*']);
  const hostOk = hostMatcher(hosts);
  // Without configured origins, a loopback listener allows an origin on a loopback name at any port.
  const loopbackHost = hostMatcher(LOOPBACK_NAMES)!;
  const originOk =
    options.allowedOrigins === undefined && loopback
      ? (origin: string) => {
          const o = normalOrigin(origin);
          return o !== undefined && loopbackHost(new URL(o).host);
        }
      : originMatcher(origins);
  return {
    check(host, origin) {
      if (hostOk && (host === undefined || !hostOk(host))) return 'host';
      if (originOk && origin !== undefined && !originOk(origin)) return 'origin';
      return undefined;
    },
    describe: () => ({ allowedHosts: hostOk ? [...hosts] : '*', allowedOrigins: originOk ? [...origins] : '*' }),
  };
}

/** Longest Host or Origin value a refusal repeats. */
const REFUSED_VALUE_CHARS = 256;

/**
 * What a refused client is told: the value it sent and the setting that would let it through (a
 * balancer in front passes on a name of its own, e.g. nginx's upstream block name).
 */
export function refusalMessage(refused: 'host' | 'origin', value: string | undefined): string {
  const sent = JSON.stringify(clip(value ?? '', REFUSED_VALUE_CHARS));
  return refused === 'host'
    ? `Host ${sent} not allowed by the proxy: add it to --allowed-hosts (MCP_WARDEN_ALLOWED_HOSTS)`
    : `Origin ${sent} not allowed by the proxy: add it to --allowed-origins (MCP_WARDEN_ALLOWED_ORIGINS)`;
}
