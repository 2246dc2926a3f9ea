// The bounds that no flag sets, surface by surface, as the README's Security section lists them:
// generated from the constants the code reads, so the page cannot drift from what runs.
import {
  INPUT_BOUNDS,
  KNOWN_BOUNDS,
  LINGER_BOUNDS,
  LIVE_REPORT_BOUNDS,
  LOG_BOUNDS,
  PEER_BOUNDS,
  POLICY_RELOAD_BOUNDS,
  READ_BOUNDS,
  STATE_BOUNDS,
  STDERR_BOUNDS,
  TRACE_BOUNDS,
} from '../../src/config/defaults.ts';

/** One bound: where it holds, what it bounds, its value, and what happens past it. */
export interface BoundRow {
  surface: string;
  bound: string;
  value: string;
  past: string;
}

const count = (n: number): string => n.toLocaleString('en-US');
const bytes = (n: number): string =>
  n % 1024 ** 2 === 0 ? `${count(n / 1024 ** 2)} MiB` : n % 1024 === 0 ? `${count(n / 1024)} KiB` : `${count(n)} bytes`;
const ms = (n: number): string => (n % 1000 === 0 ? `${count(n / 1000)} s` : `${count(n)} ms`);

export function boundRows(): BoundRow[] {
  return [
    {
      surface: 'MCP endpoint',
      bound: 'what a refused client still sends (413, or 503 past the held bodies)',
      value: `${ms(LINGER_BOUNDS.idleMs)} of silence, ${ms(LINGER_BOUNDS.totalMs)} in all, ${bytes(LINGER_BOUNDS.bytes)}`,
      past: 'read and dropped until then, so the client reads its answer; then the connection is closed',
    },
    {
      surface: 'every reader of a message (rules, redaction)',
      bound: 'nesting; values',
      value: `${count(READ_BOUNDS.depth)} levels; ${count(READ_BOUNDS.nodes)} values`,
      past: 'the rules report the message unreadable; a logged copy writes `[REDACTED: nested too deep]` or `[REDACTED: too many values]`',
    },
    {
      surface: 'sessions',
      bound: 'paths, hosts and addresses the session made known (no leak when a failure names them)',
      value: `the last ${count(KNOWN_BOUNDS.values)}, each up to ${count(KNOWN_BOUNDS.chars)} characters; the first ${count(KNOWN_BOUNDS.scanChars)} characters of a message scanned`,
      past: 'the oldest dropped; the rest of the message not learnt from',
    },
    {
      surface: 'tool schemas',
      bound: '`pattern`, `patternProperties`',
      value: 'RE2, linear in the input; repeats up to 1,000',
      past: 'a pattern RE2 cannot run leaves its schema unjudged (`schema not judged`, `unsafe-schema`)',
    },
    {
      surface: 'log records',
      bound: "a peer's strings (method, tool, string id, client name and version); a finding's `message` and `fix`",
      value: `${count(LOG_BOUNDS.stringChars)}; ${count(LOG_BOUNDS.textChars)} characters`,
      past: 'cut, after secrets are masked',
    },
    {
      surface: 'stdio server stderr',
      bound: 'a line; records; the tail a no-response finding quotes',
      value: `${count(STDERR_BOUNDS.lineChars)} characters logged, ${bytes(STDERR_BOUNDS.heldBytes)} held; ${count(STDERR_BOUNDS.burstLines)} at once, then ${count(STDERR_BOUNDS.linesPerSecond)} a second; the last ${count(STDERR_BOUNDS.tailLines)} lines, ${count(STDERR_BOUNDS.tailChars)} characters each`,
      past: 'the rest of the line read and dropped; lines dropped and counted (`stdio server stderr dropped`); older lines leave the tail',
    },
    {
      surface: 'admin port: live report',
      bound: 'a peer string; the rings, together; one rendered page or JSON',
      value: `${count(LIVE_REPORT_BOUNDS.stringChars)} characters; ${bytes(LIVE_REPORT_BOUNDS.ringBytes)}; ${bytes(LIVE_REPORT_BOUNDS.renderBytes)}`,
      past: 'cut; the largest ring drops its oldest; `503 report too large`',
    },
    {
      surface: 'traces (OTLP)',
      bound: "a peer string in a span's name or attributes; spans queued; spans per export",
      value: `${count(TRACE_BOUNDS.stringChars)} characters; ${count(TRACE_BOUNDS.maxQueueSize)}; ${count(TRACE_BOUNDS.maxExportBatchSize)}`,
      past: 'cut; new spans dropped while the queue is full (a collector that is down grows no memory)',
    },
    {
      surface: '`report`, `replay` inputs',
      bound: 'a line; gzip ratio (past the first bytes); lines',
      value: `${bytes(INPUT_BOUNDS.lineBytes)}; ${count(INPUT_BOUNDS.ratio)}:1 past ${bytes(INPUT_BOUNDS.ratioFloorBytes)}; ${count(INPUT_BOUNDS.lines)}`,
      past: 'the line skipped unread; reading stops, what was read is reported, exit 1 (`--max-ratio`, `--max-lines`)',
    },
    {
      surface: 'fleet: reads of the state store',
      bound: "one read (a session's keys, a legacy stream's); what arrives while one command waits for its reply",
      value: `${bytes(STATE_BOUNDS.readBytes)} (\`--state-max-read\`); that and ${bytes(STATE_BOUNDS.replySlackBytes)}`,
      past: `refused before Redis sends it, counted \`too-large\`, the key not read again (the newest ${count(STATE_BOUNDS.unreadable)} remembered); the connection cut and made again`,
    },
    {
      surface: 'fleet: what the state store holds',
      bound: "a session's tools/list pages; a session key taken from it; what it sends that this proxy never writes",
      value: `${count(STATE_BOUNDS.pages)}; ${count(STATE_BOUNDS.keyChars)} characters; said once every ${ms(STATE_BOUNDS.malformedLogEveryMs)}`,
      past: 'the oldest dropped; ignored, counted `malformed`',
    },
    {
      surface: 'fleet: the state store away or slow',
      bound: 'facts (and claim releases) kept for its return; sessions to read again after a missed publication; a connection; its retries',
      value: `${count(STATE_BOUNDS.backlog)}; ${count(STATE_BOUNDS.reread)}; ${ms(STATE_BOUNDS.connectTimeoutMs)}; 100 ms more each, ${ms(STATE_BOUNDS.retryMaxMs)} at most`,
      past:
        "the oldest dropped; each replica judges with what it knows (used sessions' keys refreshed every " +
        `${ms(STATE_BOUNDS.refreshEveryMs)}), and says so again every ${ms(STATE_BOUNDS.awaySayEveryMs)} while the store is away`,
    },
    {
      surface: 'fleet: peer port (`--peer-address`)',
      bound: "forwarded POSTs at once; connections that have not shown a token; peers remembered; a holder's host, token and id",
      value: `${count(PEER_BOUNDS.connections)}; ${count(PEER_BOUNDS.unprovenConnections)}; ${count(PEER_BOUNDS.peers)}; ${count(PEER_BOUNDS.hostChars)}, ${count(PEER_BOUNDS.idChars)} characters`,
      past: 'new connections closed; the oldest closed; the oldest forgotten; the holder ignored, counted `malformed`',
    },
    {
      surface: 'fleet: a forwarded legacy POST',
      bound: "the wait for an unknown session's holder; the connection to the holder; a stream's keys",
      value: `${ms(PEER_BOUNDS.holderWaitMs)} (at least \`--state-timeout\` and 50 ms); ${ms(PEER_BOUNDS.connectTimeoutMs)}; live ${ms(PEER_BOUNDS.streamTtlMs)}, rewritten every ${ms(PEER_BOUNDS.streamRefreshMs)}`,
      past: 'served where it landed; served where it landed; gone with a replica that died',
    },
    {
      surface: 'policy reload',
      bound: 'a file written in place',
      value: `taken once two reads ${ms(POLICY_RELOAD_BOUNDS.settleMs)} apart agree, for up to ${ms(POLICY_RELOAD_BOUNDS.settleMs * POLICY_RELOAD_BOUNDS.settleReads)}`,
      past: 'the policy in force stays (warn); the next change reads it again',
    },
  ];
}

/** The README's bounds table (between its `<!-- bounds -->` markers). */
export function boundsMarkdown(rows: readonly BoundRow[] = boundRows()): string {
  const lines = ['| surface | bound | value | past it |', '|---|---|---|---|'];
  for (const r of rows) lines.push(`| ${r.surface} | ${r.bound} | ${r.value} | ${r.past} |`);
  return lines.join('\n');
}
