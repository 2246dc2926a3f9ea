// Every limit and timeout the proxy has, with its default, in one table.

export interface Limits {
  /** Largest request body a client may send to the MCP endpoint (bytes); larger gets 413. */
  maxRequestBytes: number;
  /** Request bodies held at once over all exchanges (bytes); past it a POST gets 503 with Retry-After. */
  maxBufferedRequestBytes: number;
  /** Largest JSON response body that is buffered and parsed; larger streams through unaudited. */
  auditBodyBytes: number;
  /** Largest SSE event that is parsed; larger passes through unaudited. */
  auditEventBytes: number;
  /** Open (unanswered) requests tracked at once; past this the busiest session loses its oldest. */
  maxOpenRequests: number;
  /** Open requests tracked per session (or per credential without one): one client cannot crowd out another. */
  maxOpenRequestsPerSession: number;
  /** Client connections open at once; past this a new one gets 503 and is closed. */
  maxConnections: number;
  /** Sessions remembered at once; the least recently used is dropped past this. */
  maxSessions: number;
  /** A session unused this long (ms) is forgotten. */
  sessionIdleMs: number;
  /** An open request unanswered this long (ms) is logged as no-response and forgotten. */
  requestIdleMs: number;
  /** A stdio line or legacy SSE POST that is not JSON, or no valid request, unanswered this long (ms) on the session's stream: malformed-unanswered. */
  malformedAnswerMs: number;
  /** A legacy SSE stream the client dropped may be resumed with Last-Event-ID this long (ms); then its requests are logged client-closed. */
  resumeWindowMs: number;
  /** Time (ms) the upstream has to send response headers. */
  upstreamHeadersTimeoutMs: number;
  /** Longest silence (ms) between two chunks of an upstream body; 0 disables. */
  upstreamBodyTimeoutMs: number;
  /** Time (ms) to connect to the upstream. */
  upstreamConnectTimeoutMs: number;
  /** Tools remembered per session from tools/list. */
  maxToolsPerSession: number;
  /** Bytes (JSON text) of the distinct tool catalogues held at once, shared by sessions that list the same tools; past it the least recently listed is dropped. */
  maxCatalogueBytes: number;
  /** Time (ms) a client has to send its request headers (slowloris); a new connection that sends no request head in this time is closed. */
  clientHeadersTimeoutMs: number;
  /** Time (ms) a client has to send its whole request, body included (not the response). */
  clientRequestTimeoutMs: number;
  /** On SIGTERM, how long (ms) in-flight exchanges and streams may take to finish before they are cut. */
  shutdownTimeoutMs: number;
}

export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  maxRequestBytes: 4 * 1024 * 1024,
  maxBufferedRequestBytes: 64 * 1024 * 1024,
  auditBodyBytes: 4 * 1024 * 1024,
  auditEventBytes: 1024 * 1024,
  maxOpenRequests: 10_000,
  maxOpenRequestsPerSession: 1_000,
  maxConnections: 4_096,
  maxSessions: 10_000,
  sessionIdleMs: 30 * 60_000,
  requestIdleMs: 10 * 60_000,
  malformedAnswerMs: 5_000,
  resumeWindowMs: 30_000,
  upstreamHeadersTimeoutMs: 60_000,
  upstreamBodyTimeoutMs: 5 * 60_000,
  upstreamConnectTimeoutMs: 10_000,
  maxToolsPerSession: 1_000,
  maxCatalogueBytes: 32 * 1024 * 1024,
  clientHeadersTimeoutMs: 10_000,
  clientRequestTimeoutMs: 30_000,
  shutdownTimeoutMs: 10_000,
});

/**
 * How far any reader of an untrusted message goes (the rules' walker, the redacting copy): 128
 * levels (serde_json's limit; JSON Schemas sit at 10-30) and 100,000 values. Past them a rule
 * reports the message unreadable and a redacted copy writes a marker: both read the same part.
 */
export const READ_BOUNDS = Object.freeze({ depth: 128, nodes: 100_000 });

/**
 * What the admin port's live report holds and renders (src/report/live.ts): every peer string it
 * keeps (tool, method, session, client label, finding message and evidence) cut to `stringChars`,
 * the rings' entries together under `ringBytes` (oldest dropped first), and a page or JSON answer
 * past `renderBytes` refused with 503 rather than built: memory and render time stay bounded.
 */
export const LIVE_REPORT_BOUNDS = Object.freeze({ stringChars: 1024, ringBytes: 32 * 1024 * 1024, renderBytes: 64 * 1024 * 1024 });

/**
 * What a trace span carries (src/sinks/tracing.ts): every peer string in its name or attributes cut
 * to `stringChars`; the exporter queues at most `maxQueueSize` spans (past it new spans are dropped,
 * so a collector that is down cannot grow memory) and sends at most `maxExportBatchSize` at once.
 */
export const TRACE_BOUNDS = Object.freeze({ stringChars: 256, maxQueueSize: 2048, maxExportBatchSize: 512 });

/**
 * A stdio server's stderr as the log shows it (src/proxy/child-stderr.ts): each line a record of
 * the proxy's, its text cut to `lineChars` (of a longer line at most `heldBytes` are held, the
 * rest is read and dropped); `burstLines` records at once, then `linesPerSecond`: past that, lines
 * are read and dropped, and their count logged. A child that floods stderr is never blocked and
 * grows neither memory nor the log without bound.
 */
export const STDERR_BOUNDS = Object.freeze({
  lineChars: 1024,
  heldBytes: 16 * 1024,
  burstLines: 1000,
  linesPerSecond: 100,
  /** The last lines kept for a no-response finding when the child exits, each cut to tailChars. */
  tailLines: 5,
  tailChars: 200,
});

/**
 * What a log record carries of a peer's own strings (method, tool, client name and version, a
 * string id): cut to `stringChars`; a finding's message and fix, which may quote such a string,
 * cut to `textChars`.
 */
export const LOG_BOUNDS = Object.freeze({ stringChars: 1024, textChars: 2048 });

/**
 * What `report` and `replay` read of one input (src/report/input.ts): a line over `lineBytes` is
 * skipped unread; a gzip input stops once it has decoded more than `ratio` times the bytes read
 * from the file (past the first `ratioFloorBytes`), a decompression bomb; any input stops past
 * `lines` lines. Blank lines cost a count each, nothing more: CPU stays bounded per input byte.
 */
export const INPUT_BOUNDS = Object.freeze({
  lineBytes: 16 * 1024 * 1024,
  ratio: 200,
  ratioFloorBytes: 16 * 1024 * 1024,
  lines: 100_000_000,
});

/**
 * After a request refused while its body was still coming (413, or 503 past the body budget), the
 * proxy keeps reading and dropping what the client still sends, for `idleMs` of silence, `totalMs`
 * in all or `bytes`, whichever comes first, then closes. Closed at once, the unread bytes make the
 * kernel reset the connection, and a client still writing gets EPIPE before it reads its answer.
 */
export const LINGER_BOUNDS = Object.freeze({ idleMs: 1000, totalMs: 10_000, bytes: 16 * 1024 * 1024 });

/**
 * A policy file changed on disk is taken once two reads `settleMs` apart find the same text; still
 * changing after `settleReads` such periods, it is left for the writer's next change, and the
 * policy in force stays (src/config/store.ts).
 */
export const POLICY_RELOAD_BOUNDS = Object.freeze({ settleMs: 250, settleReads: 20 });

/**
 * What a session made known (src/rules/known-values.ts): the paths, hosts and addresses its client
 * sent and its server returned in a success, which a failure may then name without leaking. A
 * session keeps the last `values` of them, each at most `chars` long; each message is scanned for
 * them over its first `scanChars` characters of strings.
 */
export const KNOWN_BOUNDS = Object.freeze({ values: 256, chars: 1024, scanChars: 16 * 1024 });

/**
 * A fleet's shared state (`--state redis://`, src/state/): one read of a session's keys, or of a
 * legacy stream's, brings at most `readBytes` (Redis counts them first; the default of
 * `--state-max-read`), else it is refused, counted and not made again for that key (the newest
 * `unreadable` keys remembered); past it and `replySlackBytes` of framing arriving for one reply,
 * the connection is cut. What the store sends that this proxy never writes is said at most once
 * every `malformedLogEveryMs`; a session key past `keyChars` is not taken. A session keeps its
 * last `pages` tools/list pages in Redis; while Redis is away the newest `backlog` facts (and as
 * many claim releases) wait for it; after a missed publication the newest `reread` sessions are
 * read again. Used sessions' keys are refreshed every `refreshEveryMs`; a connection is given
 * `connectTimeoutMs`, and tried again after 100 ms more each time, `retryMaxMs` at most; while the
 * store is away, that is said again every `awaySayEveryMs`.
 */
export const STATE_BOUNDS = Object.freeze({
  readBytes: 16 * 1024 * 1024,
  replySlackBytes: 1024 * 1024,
  unreadable: 10_000,
  malformedLogEveryMs: 60_000,
  awaySayEveryMs: 60_000,
  keyChars: 8 * 1024,
  pages: 1000,
  backlog: 10_000,
  reread: 100_000,
  refreshEveryMs: 10_000,
  connectTimeoutMs: 2_000,
  retryMaxMs: 2_000,
});

/**
 * Legacy POSTs forwarded between processes (src/proxy/peers.ts, src/state/redis-streams.ts): a
 * POST naming a session nobody is known to hold waits `holderWaitMs` for its stream's fact (in a
 * fleet, at least --state-timeout and 50 ms), and a forwarded one `connectTimeoutMs` to connect,
 * else it is served where it landed. The peer port takes `connections` forwarded POSTs at once and
 * keeps the newest `unprovenConnections` of those that have not shown a token; the newest `peers`
 * addresses are remembered. A holder's host is at most `hostChars` long, its token and id
 * `idChars`. A stream's keys live `streamTtlMs`, rewritten every `streamRefreshMs` while it is open.
 */
export const PEER_BOUNDS = Object.freeze({
  holderWaitMs: 250,
  connectTimeoutMs: 2_000,
  connections: 1024,
  unprovenConnections: 256,
  peers: 1024,
  hostChars: 255,
  idChars: 256,
  streamTtlMs: 30_000,
  streamRefreshMs: 10_000,
});
