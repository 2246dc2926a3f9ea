// Prometheus metrics (prom-client, a registry of our own). Label values are bounded: methods the
// spec does not define, codes it does not name and tools outside the catalogue fold into "other".
import cluster from 'node:cluster';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { Counter, Gauge, Histogram, type Metric, Registry, collectDefaultMetrics } from 'prom-client';
import type { JudgedExchange } from '../engine/plans.ts';
import { ALL_CLIENT_METHODS } from '../mcp/methods.ts';
import type { Decision } from '../rewrite/types.ts';
import type { Finding } from '../rules/types.ts';

const KNOWN_METHODS = new Set([...ALL_CLIENT_METHODS, 'sampling/createMessage', 'roots/list', 'elicitation/create']);
const KNOWN_CODES = new Set([-32700, -32600, -32601, -32602, -32603, -32002, -32020, -32021, -32022, -32042, -32000, -32001]);
/** Distinct tool label values at most; past this, new tools count as "other". */
const MAX_TOOLS = 200;
/** Seconds, for both durations: a fast tool call to a slow report. */
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120];

const methodLabel = (m: string): string => (KNOWN_METHODS.has(m) ? m : 'other');

/** The policy in force, as mcp_warden_policy_info names it (a PolicyStore). */
export interface PolicyInForce {
  current(): { mode: string };
  /** The policy file's text; undefined for the built-in defaults. */
  text(): string | undefined;
}

/** The policy file's short hash (what `sha256sum` prints, first 12 characters); `builtin` without a file. */
const policyHash = (text: string | undefined): string =>
  text === undefined ? 'builtin' : createHash('sha256').update(text).digest('hex').slice(0, 12);

/** mcp-warden's version, from the package beside the sources; a bundle that moved them (the bench's children) says unknown. */
function buildVersion(): string {
  try {
    return (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
  } catch {
    return 'unknown';
  }
}
const BUILD_VERSION = buildVersion();

let processMetrics: Metric[] | undefined;
/**
 * The process under the names dashboards expect (process_cpu_seconds_total,
 * nodejs_heap_size_used_bytes, ...): made once per process and registered in every proxy's
 * registry. A set of its own per proxy would measure the same process again, each with an
 * event-loop-delay histogram and a GC observer of its own.
 */
function processMetricsOnce(): Metric[] {
  if (!processMetrics) {
    const register = new Registry();
    // Under --workers the primary adds up the workers' metrics: a worker label keeps each process's
    // own (limits such as process_max_fds are not sums).
    collectDefaultMetrics({ register, ...(cluster.worker ? { labels: { worker: String(cluster.worker.id) } } : {}) });
    processMetrics = register
      .getMetricsAsArray()
      .map(({ name }) => register.getSingleMetric(name))
      .filter((metric) => metric !== undefined);
  }
  return processMetrics;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly exchanges: Counter<'method' | 'status' | 'code' | 'is_error'>;
  private readonly toolCalls: Counter<'tool' | 'outcome'>;
  private readonly findings: Counter<'rule' | 'severity'>;
  private readonly rewrites: Counter<'rule'>;
  private readonly blocks: Counter<'rule'>;
  private readonly duration: Histogram<'method'>;
  private readonly upstreamDuration: Histogram<'method'>;
  private readonly streams: Gauge;
  private readonly reloads: Counter<'result'>;
  private readonly reloadSuccessful: Gauge;
  private readonly lastReload: Gauge;
  private readonly policyInfo: Gauge<'sha256' | 'mode'>;
  private readonly captureErrors: Counter;
  private readonly proxyErrors: Counter<'reason'>;
  private readonly clientDisconnects: Counter<'when'>;
  private readonly unjudgedExchanges: Counter<'reason'>;
  private readonly shadowDecisions: Counter<'rule' | 'action'>;
  private readonly stateErrors: Counter<'op' | 'reason'>;
  /** Made once the proxy has a state store (--state redis://): without one there is nothing to say. */
  private stateConnectedGauge: Gauge | undefined;
  private readonly tools = new Set<string>();

  constructor(gauges: { sessions: () => number; openRequests: () => number; upstreamUp?: () => Promise<boolean> }) {
    const registers = [this.registry];
    for (const metric of processMetricsOnce()) this.registry.registerMetric(metric);
    new Gauge({
      name: 'mcp_warden_build_info',
      help: 'Always 1: the mcp-warden version and Node.js version running',
      labelNames: ['version', 'node'],
      registers,
      // Across --workers, one value, not the sum of the workers'.
      aggregator: 'first',
    }).set({ version: BUILD_VERSION, node: process.versions.node }, 1);
    this.reloads = new Counter({
      name: 'mcp_warden_policy_reloads_total',
      help: 'Policy reloads (SIGHUP, file change) by result: success, or failure (the policy in force stays)',
      labelNames: ['result'],
      registers,
    });
    // As Prometheus names its own: the policy loaded at start counts as a successful load. Across
    // --workers the lowest: one worker whose reload failed makes the whole replica's fail.
    this.reloadSuccessful = new Gauge({
      name: 'mcp_warden_config_last_reload_successful',
      help: 'Whether the last policy load or reload succeeded (1) or was rejected (0, the policy in force stays)',
      registers,
      aggregator: 'min',
    });
    this.reloadSuccessful.set(1);
    this.lastReload = new Gauge({
      name: 'mcp_warden_config_last_reload_success_timestamp_seconds',
      help: 'When the policy in force was loaded: at start, or swapped in by a reload (Unix time)',
      registers,
      aggregator: 'min',
    });
    this.lastReload.set(Date.now() / 1000);
    this.policyInfo = new Gauge({
      name: 'mcp_warden_policy_info',
      help: 'Always 1: the policy in force, by the short sha256 of its file (builtin: no file) and its mode',
      labelNames: ['sha256', 'mode'],
      registers,
      // Across --workers: each policy a worker runs, once.
      aggregator: 'max',
    });
    this.captureErrors = new Counter({
      name: 'mcp_warden_capture_errors_total',
      help: "Exchanges the capture file (the policy's capture.path) could not take: the file cannot be opened or written",
      registers,
    });
    this.shadowDecisions = new Counter({
      name: 'mcp_warden_shadow_decisions_total',
      help: 'Under audit: what the shadow policy (--shadow, default config/enforce.yaml) would do with each finding, by rule and action',
      labelNames: ['rule', 'action'],
      registers,
    });
    this.unjudgedExchanges = new Counter({
      name: 'mcp_warden_unjudged_total',
      help: 'MCP exchanges relayed without full judging, by reason (UNJUDGED_REASONS: scoped-out, json-post, too-large, unknown-coding, too-deep, unsafe-schema)',
      labelNames: ['reason'],
      registers,
    });
    this.stateErrors = new Counter({
      name: 'mcp_warden_state_errors_total',
      help: 'Operations on the shared state store (--state redis://) that failed or timed out, were not tried while it was away, or whose reply was malformed or too large, by op (connect, write, read, claim, refresh, subscribe) and reason (failed, unavailable, malformed, too-large): the replica went on with what it knows',
      labelNames: ['op', 'reason'],
      registers,
    });
    this.proxyErrors = new Counter({
      name: 'mcp_warden_proxy_errors_total',
      help: 'Answers the proxy gave itself, by reason (the stable WARDEN_* code of its JSON-RPC error)',
      labelNames: ['reason'],
      registers,
    });
    this.clientDisconnects = new Counter({
      name: 'mcp_warden_client_disconnects_total',
      help: 'Clients that closed or reset their connection, by when: idle (between requests), request (before its answer began), response (while it was written); not proxy errors',
      labelNames: ['when'],
      registers,
    });
    this.exchanges = new Counter({
      name: 'mcp_warden_exchanges_total',
      help: 'Completed exchanges by method, HTTP status, JSON-RPC error code and isError',
      labelNames: ['method', 'status', 'code', 'is_error'],
      registers,
    });
    this.toolCalls = new Counter({
      name: 'mcp_warden_tool_calls_total',
      help: 'tools/call exchanges by tool (tools outside the catalogue: other)',
      labelNames: ['tool', 'outcome'],
      registers,
    });
    this.findings = new Counter({
      name: 'mcp_warden_findings_total',
      help: 'Findings by rule and severity',
      labelNames: ['rule', 'severity'],
      registers,
    });
    this.rewrites = new Counter({
      name: 'mcp_warden_rewrites_total',
      help: 'Messages rewritten, by rule',
      labelNames: ['rule'],
      registers,
    });
    this.blocks = new Counter({ name: 'mcp_warden_blocks_total', help: 'Messages blocked, by rule', labelNames: ['rule'], registers });
    this.duration = new Histogram({
      name: 'mcp_warden_exchange_duration_seconds',
      help: "An exchange's whole time through the proxy, from its request to its response, by method",
      labelNames: ['method'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.upstreamDuration = new Histogram({
      name: 'mcp_warden_upstream_duration_seconds',
      help: "The upstream's own time: from the request sent to its response headers, by method (the POST's first message; GET, DELETE)",
      labelNames: ['method'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.streams = new Gauge({ name: 'mcp_warden_open_sse_streams', help: 'SSE streams open through the proxy', registers });
    new Gauge({
      name: 'mcp_warden_sessions',
      help: 'Sessions the proxy remembers',
      registers,
      // Across --workers every worker knows every session (they share them): the largest, not the sum.
      aggregator: 'max',
      collect() {
        this.set(gauges.sessions());
      },
    });
    const { upstreamUp } = gauges;
    if (upstreamUp)
      new Gauge({
        name: 'mcp_warden_upstream_up',
        help: 'Whether the upstream accepts a TCP connection (1 or 0), probed at each scrape (/upstreamz answers the same)',
        registers,
        // Across --workers: up only if every worker reaches it.
        aggregator: 'min',
        async collect() {
          this.set((await upstreamUp()) ? 1 : 0);
        },
      });
    new Gauge({
      name: 'mcp_warden_open_requests',
      help: 'Requests waiting for their response',
      registers,
      collect() {
        this.set(gauges.openRequests());
      },
    });
  }

  exchange(judged: JudgedExchange, status: number | undefined, knownTool: (name: string) => boolean): void {
    const c = judged.exchange;
    const { request, response } = c;
    const method = methodLabel(request.method);
    // An error without an id answering the one request is in the outcome only (the rules judge its id).
    const errorCode = response?.kind === 'error' ? response.code : c.outcome.startsWith('error:') ? Number(c.outcome.slice(6)) : undefined;
    const code =
      errorCode === undefined ? 'none' : typeof errorCode === 'number' && KNOWN_CODES.has(errorCode) ? String(errorCode) : 'other';
    const isError = c.outcome === 'isError' ? 'true' : c.outcome === 'result' ? 'false' : 'none';
    this.exchanges.inc({ method, status: status === undefined ? 'none' : String(status), code, is_error: isError });
    if (request.tool !== undefined)
      this.toolCalls.inc({ tool: this.toolLabel(request.tool, knownTool), outcome: c.outcome.startsWith('error:') ? 'error' : c.outcome });
    if (c.response) this.duration.observe({ method }, c.durationMs / 1000);
    this.found(request.verdict.findings);
    this.found(judged.findings);
    this.decided(request.verdict.decision);
    this.decided(judged.decision);
  }

  found(findings: readonly Finding[]): void {
    for (const f of findings) this.findings.inc({ rule: f.rule, severity: f.severity });
  }

  decided(decision: Decision | undefined): void {
    if (!decision || decision.kind === 'pass') return;
    for (const rule of decision.rules) (decision.kind === 'mutate' ? this.rewrites : this.blocks).inc({ rule });
  }

  /** A policy reload ended: swapped in (`ok`, `policy` the store it is now in force in), or rejected. */
  reloaded(ok: boolean, policy?: PolicyInForce): void {
    this.reloads.inc({ result: ok ? 'success' : 'failure' });
    this.reloadSuccessful.set(ok ? 1 : 0);
    if (!ok) return;
    this.lastReload.set(Date.now() / 1000);
    if (policy) this.policyInForce(policy);
  }

  /** The policy now in force (at start, and after each reload that swapped one in). */
  policyInForce(policy: PolicyInForce): void {
    this.policyInfo.reset();
    this.policyInfo.set({ sha256: policyHash(policy.text()), mode: policy.current().mode }, 1);
  }

  /** An exchange the capture file could not take. */
  captureError(): void {
    this.captureErrors.inc();
  }

  /** The upstream answered a request's headers after `seconds` (`method`: the POST's first message's, or GET, DELETE). */
  upstreamTimed(method: string, seconds: number): void {
    this.upstreamDuration.observe({ method: method === 'GET' || method === 'DELETE' ? method : methodLabel(method) }, seconds);
  }

  /** Under audit, the shadow policy's action for one finding. */
  shadowDecided(rule: string, action: string): void {
    this.shadowDecisions.inc({ rule, action });
  }

  /** An MCP exchange relayed without full judging. */
  unjudged(reason: string): void {
    this.unjudgedExchanges.inc({ reason });
  }

  /** The proxy answered a request itself (its reason: a WARDEN_* code). */
  proxyError(reason: string): void {
    this.proxyErrors.inc({ reason });
  }

  /** A client left: between requests (idle), before its answer began (request), or while it was written (response). */
  clientDisconnected(when: 'idle' | 'request' | 'response'): void {
    this.clientDisconnects.inc({ when });
  }

  /** An operation on the shared state store failed (its op: connect, write, read, refresh, subscribe). */
  stateError(op: string, reason: 'failed' | 'unavailable' | 'malformed' | 'too-large' = 'failed'): void {
    this.stateErrors.inc({ op, reason });
  }

  /** Whether the shared state store is connected now (1) or away (0). */
  stateConnected(up: boolean): void {
    this.stateConnectedGauge ??= new Gauge({
      name: 'mcp_warden_state_connected',
      help: 'With --state redis://: 1 while the shared state store is connected, 0 while it is away (this process)',
      registers: [this.registry],
    });
    this.stateConnectedGauge.set(up ? 1 : 0);
  }

  streamOpened(): void {
    this.streams.inc();
  }

  streamClosed(): void {
    this.streams.dec();
  }

  private toolLabel(name: string, known: (name: string) => boolean): string {
    if (!known(name)) return 'other';
    if (this.tools.has(name) || this.tools.size < MAX_TOOLS) {
      this.tools.add(name);
      return name;
    }
    return 'other';
  }
}
