// The one table of protocol versions. Every per-version difference the proxy needs is a column
// here; no other module compares version strings.

export type Era = 'legacy' | 'modern';

export interface VersionInfo {
  version: string;
  era: Era;
  /** Streamable HTTP (true) or the 2024-11-05 HTTP+SSE transport (false). */
  streamableHttp: boolean;
  /** JSON-RPC batches allowed in a POST body. */
  batching: boolean;
  /** Mcp-Session-Id sessions exist. */
  sessions: boolean;
  /** An error response may omit its id when the request's id was unreadable. */
  errorIdOptional: boolean;
  /** Closing a request's stream cancels the request. */
  disconnectCancels: boolean;
}

const row = (version: string, era: Era, p: Omit<VersionInfo, 'version' | 'era'>): VersionInfo => ({ version, era, ...p });

export const VERSIONS: readonly VersionInfo[] = [
  row('2024-11-05', 'legacy', { streamableHttp: false, batching: false, sessions: false, errorIdOptional: false, disconnectCancels: false }),
  row('2025-03-26', 'legacy', { streamableHttp: true, batching: true, sessions: true, errorIdOptional: false, disconnectCancels: false }),
  row('2025-06-18', 'legacy', { streamableHttp: true, batching: false, sessions: true, errorIdOptional: false, disconnectCancels: false }),
  row('2025-11-25', 'legacy', { streamableHttp: true, batching: false, sessions: true, errorIdOptional: true, disconnectCancels: false }),
  row('2026-07-28', 'modern', { streamableHttp: true, batching: false, sessions: false, errorIdOptional: true, disconnectCancels: true }),
];

const byVersion = new Map(VERSIONS.map((v) => [v.version, v]));

export const LATEST_VERSION = '2026-07-28';

/** What the spec says a server assumes when a legacy request names no version (R44). */
export const DEFAULT_LEGACY_VERSION = '2025-03-26';

/** The newest version of each era: what judges traffic of that era that names a version nobody defined. */
export const LATEST_OF: Readonly<Record<Era, string>> = {
  legacy: VERSIONS.filter((v) => v.era === 'legacy').at(-1)!.version,
  modern: VERSIONS.filter((v) => v.era === 'modern').at(-1)!.version,
};

/** The row of a version the spec defines; undefined for any other string (never a guess). */
export function versionInfo(version: string | undefined): VersionInfo | undefined {
  return version === undefined ? undefined : byVersion.get(version);
}

/**
 * Era of a version the spec defines; undefined for any other string. A version string nobody
 * defined says nothing about its era (it does not sort into one): how the message was sent does,
 * and only the caller knows that (see judgingVersion).
 */
export function eraOf(version: string): Era | undefined {
  return versionInfo(version)?.era;
}

/**
 * The version whose rules judge traffic that names `version`, sent the way of `sentAs`: the
 * version itself when the spec defines it; for a version nobody defined (a client asking for
 * 2027-01-01), the newest version of the era the message was sent in, whose rules say how a
 * server turns an unsupported version away (2026-07-28: -32022 with data.supported on HTTP 400,
 * R19; legacy: initialize answered with a version the server supports, or an error, R15).
 * Undefined when there is no version, or no era to judge it by.
 */
export function judgingVersion(version: string | undefined, sentAs: Era | undefined): string | undefined {
  if (version === undefined || byVersion.has(version)) return version;
  return sentAs === undefined ? undefined : LATEST_OF[sentAs];
}

/** _meta keys of the modern era. */
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
} as const;
