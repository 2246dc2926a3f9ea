// The one table of protocol versions. Every per-version difference the proxy and `check` need is
// a column here; other modules read a row (or a set of versions derived from the table) and
// compare no version strings. Each column names the spec page it comes from, under
// https://modelcontextprotocol.io/specification/<version>/ and the schemas in
// https://github.com/modelcontextprotocol/modelcontextprotocol/tree/main/schema/<version>.

/** The eras of basic/versioning (2026-07-28): legacy versions have an initialize handshake, modern ones are stateless. */
export type Era = 'legacy' | 'modern';

/** CallToolResult content block types (server/tools, "Tool Result"). */
export type ContentType = 'text' | 'image' | 'audio' | 'resource' | 'resource_link';

export interface VersionInfo {
  version: string;
  era: Era;
  /** Streamable HTTP (true) or the 2024-11-05 HTTP+SSE transport (false): basic/transports. */
  streamableHttp: boolean;
  /** JSON-RPC batches allowed in a POST body: 2025-03-26 basic, "Batching". */
  batching: boolean;
  /** Mcp-Session-Id sessions exist: basic/transports, "Session Management". */
  sessions: boolean;
  /** A legacy client sends MCP-Protocol-Version on every request after initialize: 2025-06-18 basic/transports, "Protocol Version Header". */
  versionHeaderAfterInit: boolean;
  /** An error response may omit its id when the request's id was unreadable: basic, "Error Responses" (2025-11-25 on). */
  errorIdOptional: boolean;
  /** A foreign Origin must be answered with HTTP 403 (not just rejected): basic/transports, "Security Warning" (2025-11-25 on). */
  foreignOrigin403: boolean;
  /** Arguments failing a tool's inputSchema are a tool execution error (isError), not -32602: server/tools, "Error Handling" (2025-11-25 on). */
  inputErrorsAreToolErrors: boolean;
  /** ServerCapabilities has `completions` (schema.json; 2024-11-05 has none a server could declare). */
  completionsCapability: boolean;
  /** The client-to-server request methods (the schema's ClientRequest union). */
  methods: ReadonlySet<string>;
  /** A tool may declare an outputSchema and return structuredContent: server/tools, "Structured Content" (2025-06-18 on). */
  structuredOutput: boolean;
  /** The content block types a CallToolResult may hold (schema.json ContentBlock). */
  contentTypes: readonly ContentType[];
  /** The dialect of a tool schema without `$schema` (schema.json's own `$schema`; 2025-11-25 basic, "JSON Schema Usage"). */
  schemaDialect: 'draft-07' | '2020-12';
  /** The error codes the spec adds to JSON-RPC's five standard ones (schema.ts; 2026-07-28 basic, "Error Codes"). */
  codes: readonly number[];
}

const LEGACY_METHODS = [
  'initialize',
  'ping',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'tools/list',
  'tools/call',
  'logging/setLevel',
  'completion/complete',
];
const TASK_METHODS = ['tasks/get', 'tasks/result', 'tasks/cancel', 'tasks/list'];
const MODERN_METHODS = [
  'server/discover',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'subscriptions/listen',
  'prompts/list',
  'prompts/get',
  'tools/list',
  'tools/call',
  'completion/complete',
];

const RESOURCE_NOT_FOUND = -32002;
const URL_ELICITATION_REQUIRED = -32042;
const HEADER_MISMATCH = -32020;
const MISSING_CLIENT_CAPABILITY = -32021;
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

export const VERSIONS: readonly VersionInfo[] = [
  {
    version: '2024-11-05',
    era: 'legacy',
    streamableHttp: false,
    batching: false,
    sessions: false,
    versionHeaderAfterInit: false,
    errorIdOptional: false,
    foreignOrigin403: false,
    inputErrorsAreToolErrors: false,
    completionsCapability: false,
    methods: new Set(LEGACY_METHODS),
    structuredOutput: false,
    contentTypes: ['text', 'image', 'resource'],
    schemaDialect: 'draft-07',
    codes: [RESOURCE_NOT_FOUND],
  },
  {
    version: '2025-03-26',
    era: 'legacy',
    streamableHttp: true,
    batching: true,
    sessions: true,
    versionHeaderAfterInit: false,
    errorIdOptional: false,
    foreignOrigin403: false,
    inputErrorsAreToolErrors: false,
    completionsCapability: true,
    methods: new Set(LEGACY_METHODS),
    structuredOutput: false,
    contentTypes: ['text', 'image', 'resource', 'audio'],
    schemaDialect: 'draft-07',
    codes: [RESOURCE_NOT_FOUND],
  },
  {
    version: '2025-06-18',
    era: 'legacy',
    streamableHttp: true,
    batching: false,
    sessions: true,
    versionHeaderAfterInit: true,
    errorIdOptional: false,
    foreignOrigin403: false,
    inputErrorsAreToolErrors: false,
    completionsCapability: true,
    methods: new Set(LEGACY_METHODS),
    structuredOutput: true,
    contentTypes: ['text', 'image', 'resource', 'audio', 'resource_link'],
    schemaDialect: 'draft-07',
    codes: [RESOURCE_NOT_FOUND],
  },
  {
    version: '2025-11-25',
    era: 'legacy',
    streamableHttp: true,
    batching: false,
    sessions: true,
    versionHeaderAfterInit: true,
    errorIdOptional: true,
    foreignOrigin403: true,
    inputErrorsAreToolErrors: true,
    completionsCapability: true,
    methods: new Set([...LEGACY_METHODS, ...TASK_METHODS]),
    structuredOutput: true,
    contentTypes: ['text', 'image', 'resource', 'audio', 'resource_link'],
    schemaDialect: '2020-12',
    codes: [RESOURCE_NOT_FOUND, URL_ELICITATION_REQUIRED],
  },
  {
    version: '2026-07-28',
    era: 'modern',
    streamableHttp: true,
    batching: false,
    sessions: false,
    // A modern request carries MCP-Protocol-Version always, with its _meta; there is no initialize.
    versionHeaderAfterInit: false,
    errorIdOptional: true,
    foreignOrigin403: true,
    inputErrorsAreToolErrors: true,
    completionsCapability: true,
    methods: new Set(MODERN_METHODS),
    structuredOutput: true,
    contentTypes: ['text', 'image', 'resource', 'audio', 'resource_link'],
    schemaDialect: '2020-12',
    codes: [HEADER_MISMATCH, MISSING_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION],
  },
];

const byVersion = new Map(VERSIONS.map((v) => [v.version, v]));

const newestOf = (era: Era): string => VERSIONS.filter((v) => v.era === era).at(-1)!.version;

/** The newest version of each era: what judges traffic of that era that names a version nobody defined, and what `check` proposes. */
export const LATEST_OF: Readonly<Record<Era, string>> = { legacy: newestOf('legacy'), modern: newestOf('modern') };

export const LATEST_VERSION = VERSIONS.at(-1)!.version;

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
 * server turns an unsupported version away (2026-07-28 basic/versioning: -32022 with
 * data.supported on HTTP 400; legacy basic/lifecycle, "Version Negotiation": initialize answered
 * with a version the server supports, or an error). Undefined when there is no version, or no era
 * to judge it by.
 */
export function judgingVersion(version: string | undefined, sentAs: Era | undefined): string | undefined {
  if (version === undefined || byVersion.has(version)) return version;
  return sentAs === undefined ? undefined : LATEST_OF[sentAs];
}

/** The row whose facts hold for `version` sent in era `sentAs`: its own, or for a version nobody defined the newest of that era's (see judgingVersion). */
export function judgingInfo(version: string, sentAs: Era): VersionInfo {
  return byVersion.get(version) ?? byVersion.get(LATEST_OF[sentAs])!;
}

/** _meta keys of the modern era. */
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
} as const;
