// `mcp-warden demo`: the built-in broken server behind the proxy, one scripted client session
// through it, and what the proxy logged, printed for a person. Driving and printing are separate:
// each section of the printout is one renderer over the log records and what the client received.
import { asRecord } from '../codec/json-value.ts';
import { fileURLToPath } from 'node:url';
import { formatPolicyError, loadPolicyFile } from '../config/load.ts';
import { REWRITABLE } from '../rewrite/rewriters.ts';
import { createProxy } from '../proxy/server.ts';
import { createLogger } from '../sinks/logger.ts';
import { startBrokenServer } from './broken-server.ts';
import { createClient, PROTOCOL_VERSION, type DemoClient, type JsonObject, type Received } from './client.ts';
import type { Logger } from 'pino';
import type { Policy } from '../config/types.ts';
import { renderTransports, runLegacy, runStdio, UNKNOWN_TOOL } from './transports.ts';
import { clip, describeResponse, painter, type LogRecord, type Paint, type Style } from './print.ts';

/** What the client sent and got back: requests by JSON-RPC id, and the DELETE's answer. */
export interface SessionResult {
  byId: Map<number, Received & { label: string }>;
  end: Received;
}

interface Step {
  method: string;
  params?: JsonObject;
  notification?: boolean;
}

const call = (name: string, args: JsonObject = {}, meta?: JsonObject): Step => ({
  method: 'tools/call',
  params: { name, arguments: args, ...(meta && { _meta: meta }) },
});

const SESSION: readonly Step[] = [
  {
    method: 'initialize',
    params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'mcp-warden-demo', version: '1.0.0' } },
  },
  { method: 'notifications/initialized', notification: true },
  { method: 'tools/list' },
  call('get_weather', { city: 'Paris' }),
  call('divide', { a: 1, b: 0 }),
  call('delete_everything'),
  call('export_report'),
  call('lookup_user', { id: 'u-42' }),
  call('send_email', { to: 'ops@example.com', subject: 'Weekly report' }),
  call('slow_report', {}, { progressToken: 'report-1' }),
  { method: 'resources/list' },
];

const TOOL_CALLS = SESSION.filter((s) => s.method === 'tools/call').length;

/** The two shipped policies the demo runs the same broken session under. */
const RUNS = [
  { file: 'audit.yaml', title: 'staging: every finding logged, nothing changed' },
  { file: 'enforce.yaml', title: 'production: every safe normalisation on' },
] as const;

const configFile = (name: string): string => fileURLToPath(new URL(`../../config/${name}`, import.meta.url));

export async function runDemo(out: NodeJS.WritableStream, options: { color?: boolean } = {}): Promise<number> {
  const paint = painter(options.color ?? (out as { isTTY?: boolean }).isTTY === true);
  const cleanup: Array<() => Promise<void>> = [];
  try {
    const server = await startBrokenServer();
    cleanup.push(server.close);
    out.write(renderHeader(server.url, paint));
    for (const run of RUNS) {
      const policy = await shippedPolicy(run.file);
      const { records, logger } = recordingLogger();
      const proxy = await createProxy({ upstream: server.url, logger, policy: () => policy }).listen(0, '127.0.0.1');
      const client = createClient(proxy.url);
      try {
        const session = await driveSession(client);
        out.write(`\n${paint('bold', `Under config/${run.file}`)} ${paint('dim', `(${run.title}), proxy at ${proxy.url.href}`)}\n\n`);
        out.write(renderExchanges(records, session, paint));
        out.write(policy.mode === 'audit' ? renderFindings(records, paint) : renderRewrites(records, paint));
        const missing = missingRecords(records, session);
        if (missing.length > 0) {
          out.write(`${paint('red', 'demo failed:')} the proxy log has no record of ${missing.join(', ')}\n`);
          return 1;
        }
      } finally {
        await client.close();
        await proxy.close();
      }
    }
    const transports = await otherTransports(paint);
    out.write(transports.text);
    if (transports.missing.length > 0) {
      out.write(`${paint('red', 'demo failed:')} ${transports.missing.join('; ')}\n`);
      return 1;
    }
    out.write(renderClosing(paint));
    return 0;
  } catch (err) {
    out.write(`${paint('red', 'demo failed:')} ${(err as Error).message}\n`);
    return 1;
  } finally {
    for (const close of cleanup.reverse()) await close();
  }
}

async function shippedPolicy(file: string): Promise<Policy> {
  const loaded = await loadPolicyFile(configFile(file), { rewritable: REWRITABLE });
  if (!loaded.ok) throw new Error(`config/${file} does not validate: ${loaded.errors.map(formatPolicyError).join('; ')}`);
  return loaded.policy;
}

/** A logger whose records are kept in memory: the printout is made of them. */
function recordingLogger(): { records: LogRecord[]; logger: Logger } {
  const records: LogRecord[] = [];
  const logger = createLogger({
    destination: {
      write(lines: string) {
        for (const line of lines.split('\n')) if (line) records.push(JSON.parse(line) as LogRecord);
      },
    },
  });
  return { records, logger };
}

/** One exchange over the legacy HTTP+SSE transport and one over stdio, under enforce.yaml; what was not logged or not rewritten. */
async function otherTransports(paint: Paint): Promise<{ text: string; missing: string[] }> {
  const policy = await shippedPolicy('enforce.yaml');
  const { records, logger } = recordingLogger();
  const runs = [await runLegacy(policy, logger), await runStdio(policy, logger)];
  const missing = runs
    .filter((r) => asRecord(r.answer?.error)?.code !== -32602)
    .map((r) => `over ${r.transport}, the unknown tool did not reach the client as -32602`);
  const text = `\n${paint('bold', 'Other transports, under config/enforce.yaml')} ${paint('dim', `(a tools/call of "${UNKNOWN_TOOL}", which neither server has)`)}\n\n${renderTransports(records, runs, paint)}`;
  return { text, missing };
}

/** The demo's session, request by request, through `client`: what the client received for each. */
export async function driveSession(client: DemoClient): Promise<SessionResult> {
  const byId: SessionResult['byId'] = new Map();
  for (const step of SESSION) {
    if (step.notification) {
      await client.notify(step.method, step.params);
      continue;
    }
    const received = await client.request(step.method, step.params);
    const tool = step.params?.name;
    byId.set(received.id, { ...received, label: typeof tool === 'string' ? `${step.method} ${tool}` : step.method });
  }
  return { byId, end: await client.end() };
}

/** Calls the proxy did not log: every request needs its exchange record, the DELETE its session end. */
function missingRecords(records: readonly LogRecord[], session: SessionResult): string[] {
  const missing = [...session.byId]
    .filter(([id]) => !records.some((r) => r.msg === 'exchange' && r.id === id))
    .map(([id, got]) => `${got.label} (id ${id})`);
  if (!records.some((r) => r.msg === 'session end')) missing.push('the session end (DELETE)');
  return missing;
}

// ---- printing ----

function renderHeader(server: URL, paint: Paint): string {
  return [
    paint('bold', 'mcp-warden demo'),
    `  server  ${server.href}  a built-in MCP server that breaks some of the protocol's error rules on purpose`,
    `  proxy   mcp-warden in front of it, once under each shipped policy`,
    `  client  one MCP session through the proxy: initialize, tools/list, ${TOOL_CALLS} tool calls, resources/list, DELETE`,
    '          then one call over the legacy HTTP+SSE transport and one over stdio',
    '',
  ].join('\n');
}

function renderClosing(paint: Paint): string {
  return [
    '',
    paint('dim', 'Each row is one "exchange" record of the proxy\'s log, each finding a "violation" record, each'),
    paint('dim', 'change a "rewrite" record. `mcp-warden rules` lists every rule; config/*.yaml are the two policies.'),
    '',
  ].join('\n');
}

const SEVERITY_STYLE: Record<string, Style> = { error: 'red', warning: 'yellow', info: 'dim' };

/** What the enforce policy changed: one line per rewrite or block, with what the client got instead. */
export function renderRewrites(records: readonly LogRecord[], paint: Paint): string {
  const changes = records.filter((r) => r.msg === 'rewrite' || r.msg === 'block');
  if (changes.length === 0) return `\n  ${paint('green', 'Nothing to rewrite.')}\n`;
  const lines = [
    '',
    `  ${paint('bold', `REWRITES: ${changes.length}`)}  ${paint('dim', "(the client received the answer on the right, not the server's)")}`,
  ];
  for (const r of changes) {
    const where = `${String(r.method)}${typeof r.tool === 'string' ? ` ${r.tool}` : ''}`;
    const rules = Array.isArray(r.rules) ? r.rules.join(', ') : String(r.rule);
    lines.push(`  ${paint('yellow', where.padEnd(30))} ${rules}`, `  ${' '.repeat(30)} ${paint('dim', clip(String(r.after), 110))}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The proxy's findings grouped by rule, in the order they were first seen: where, what, and the fix. */
export function renderFindings(records: readonly LogRecord[], paint: Paint): string {
  const byRule = new Map<string, LogRecord[]>();
  for (const r of records) {
    if (r.msg !== 'violation') continue;
    const list = byRule.get(String(r.rule)) ?? [];
    list.push(r);
    byRule.set(String(r.rule), list);
  }
  if (byRule.size === 0) return `\n  ${paint('green', 'No findings.')}\n`;
  const total = [...byRule.values()].reduce((n, list) => n + list.length, 0);
  const lines = ['', `  ${paint('bold', `FINDINGS: ${total} in ${byRule.size} rules`)}`];
  for (const [rule, list] of byRule) {
    const severity = String(list[0]!.severity);
    lines.push('', `  ${paint(SEVERITY_STYLE[severity] ?? 'dim', severity.padEnd(7))} ${paint('bold', rule)}  (${list.length})`);
    for (const f of list) {
      const where = `${String(f.method ?? 'POST')}${typeof f.tool === 'string' ? ` ${f.tool}` : ''}`;
      lines.push(`          ${where}: ${String(f.message)}`);
    }
    lines.push(`          ${paint('dim', `fix: ${String(list[0]!.fix)}`)}`);
  }
  return `${lines.join('\n')}\n`;
}

interface Cell {
  text: string;
  style?: Style;
  right?: boolean;
}

/** One row per exchange (and the session end) in the proxy's log, next to what the client received. */
export function renderExchanges(records: readonly LogRecord[], session: SessionResult, paint: Paint): string {
  const rows: Cell[][] = [
    ['METHOD', 'TOOL', 'HTTP', 'OUTCOME', 'TIME', 'FINDINGS', 'CLIENT RECEIVED'].map((text) => ({ text, style: 'bold' })),
  ];
  for (const r of records) {
    if (r.msg === 'exchange') {
      const outcome = String(r.outcome);
      const got = typeof r.id === 'number' ? session.byId.get(r.id) : undefined;
      rows.push([
        { text: String(r.method) },
        { text: typeof r.tool === 'string' ? r.tool : '' },
        { text: String(r.status ?? '-') },
        { text: outcome, style: outcome === 'result' ? 'green' : outcome === 'isError' ? 'yellow' : 'red' },
        { text: typeof r.durationMs === 'number' ? `${r.durationMs.toFixed(1)} ms` : '', right: true, style: 'dim' },
        { text: r.violations ? String(r.violations) : '', right: true, style: r.violations ? 'red' : undefined },
        { text: got ? describeReceived(got) : '' },
      ]);
    } else if (r.msg === 'session end') {
      rows.push([
        { text: 'DELETE' },
        { text: '' },
        { text: String(r.status) },
        { text: 'session end', style: 'dim' },
        { text: '' },
        { text: '' },
        { text: describeReceived(session.end) },
      ]);
    }
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]?.text.length ?? 0)));
  const line = (row: Cell[]) =>
    row
      .map((c, i) => {
        const text = i === row.length - 1 ? c.text : c.right ? c.text.padStart(widths[i]!) : c.text.padEnd(widths[i]!);
        return c.style ? paint(c.style, text) : text;
      })
      .join('  ');
  return rows.map((row) => `${`  ${line(row)}`.trimEnd()}\n`).join('');
}

/** A short note of what the client received, e.g. `HTML page (text/html, 312 bytes)`. */
export function describeReceived(r: Received): string {
  if (r.response) {
    const n = r.others.length;
    const via = r.contentType === 'text/event-stream' ? `SSE: ${n} notification${n === 1 ? '' : 's'}, then` : 'JSON';
    return `${via} ${describeResponse(r.response)}${r.sessionId ? ' + Mcp-Session-Id' : ''}`;
  }
  if (r.bytes === 0) return 'no body';
  if (r.contentType === 'text/html') return `HTML page (text/html, ${r.bytes} bytes)`;
  return `not a JSON-RPC response (${r.contentType || 'no content type'}, ${r.bytes} bytes): ${clip(r.excerpt.replace(/\s+/g, ' '), 40)}`;
}
