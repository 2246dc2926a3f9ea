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

export function versionInfo(version: string | undefined): VersionInfo | undefined {
  return version === undefined ? undefined : byVersion.get(version);
}

/** Era of a version string; unknown strings are judged by whether they sort after the last legacy one. */
export function eraOf(version: string): Era {
  return versionInfo(version)?.era ?? (version > '2025-11-25' ? 'modern' : 'legacy');
}

/** _meta keys of the modern era. */
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
} as const;
