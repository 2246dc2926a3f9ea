// Prometheus metrics (prom-client, a registry of our own). Label values are bounded: methods the
// spec does not define, codes it does not name and tools outside the catalogue fold into "other".
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

const methodLabel = (m: string): string => (KNOWN_METHODS.has(m) ? m : 'other');

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
    collectDefaultMetrics({ register });
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
  private readonly streams: Gauge;
  private readonly reloads: Counter<'result'>;
  private readonly lastReload: Gauge;
  private readonly proxyErrors: Counter<'reason'>;
  private readonly unjudgedExchanges: Counter<'reason'>;
  private readonly shadowDecisions: Counter<'rule' | 'action'>;
  private readonly stateErrors: Counter<'op' | 'reason'>;
  private readonly tools = new Set<string>();

  constructor(gauges: { sessions: () => number; openRequests: () => number }) {
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
    this.lastReload = new Gauge({
      name: 'mcp_warden_policy_last_reload_success_timestamp_seconds',
      help: 'When the policy in force was last swapped in by a reload (Unix time; 0: never reloaded)',
      registers,
      aggregator: 'max',
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
      help: 'Operations on the shared state store (--state redis://) that failed or timed out, or whose reply was malformed or too large, by op (connect, write, read, claim, refresh, subscribe) and reason (failed, malformed, too-large): the replica went on with what it knows',
      labelNames: ['op', 'reason'],
      registers,
    });
    this.proxyErrors = new Counter({
      name: 'mcp_warden_proxy_errors_total',
      help: 'Answers the proxy gave itself, by reason (the stable WARDEN_* code of its JSON-RPC error)',
      labelNames: ['reason'],
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
      name: 'mcp_warden_upstream_duration_seconds',
      help: 'Time from a request to its response, by method',
      labelNames: ['method'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120],
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

  /** A policy reload ended: swapped in (`ok`), or rejected. */
  reloaded(ok: boolean): void {
    this.reloads.inc({ result: ok ? 'success' : 'failure' });
    if (ok) this.lastReload.set(Date.now() / 1000);
  }

  /** Under audit, the shadow policy's action for one finding. */
  shadowDecided(rule: string, action: string): void {
    this.shadowDecisions.inc({ rule, action });
  }

  /** The proxy answered a request itself (its reason: a WARDEN_* code). */
  /** An MCP exchange relayed without full judging. */
  unjudged(reason: string): void {
    this.unjudgedExchanges.inc({ reason });
  }

  proxyError(reason: string): void {
    this.proxyErrors.inc({ reason });
  }

  /** An operation on the shared state store failed (its op: connect, write, read, refresh, subscribe). */
  stateError(op: string, reason: 'failed' | 'malformed' | 'too-large' = 'failed'): void {
    this.stateErrors.inc({ op, reason });
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
