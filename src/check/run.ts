// `mcp-warden check`: connects to one MCP endpoint the way an agent would, sends the probes one at
// a time, judges every answer with the proxy's rules plus the probe's own expectation, and returns
// a report, with what built the server (recognised from its answers) and the fixes in that
// framework. Bounded: a fixed list of probes, a timeout per probe and one for the whole run, a byte
// cap per answer, no redirects followed, nothing sent anywhere but the URL given.
import { randomBytes } from 'node:crypto';
import { eraOf } from '../mcp/versions.ts';
import { asRecord } from '../codec/json-value.ts';
import type { Message } from '../codec/jsonrpc.ts';
import type { FrameworkId } from '../frameworks/frameworks.ts';
import { recognizeFramework } from '../frameworks/recognize.ts';
import { frameworkFixLine } from '../rules/explain.ts';
import { chooseEra, type EraOutcome } from './era.ts';
import { execute, skipped, type ExecDeps } from './exec.ts';
import type { CheckChannel } from './channel.ts';
import { CheckHttp, type HttpLimits } from './http.ts';
import { LegacySseChannel } from './legacy-channel.ts';
import { StdioChannel, type StdioTarget } from './stdio-channel.ts';

export type { StdioTarget };

/** The channel to the server: stdio for a command; for a URL, the legacy transport when asked (or when auto and its path ends in /sse), else Streamable HTTP. */
function channelFor(opts: CheckOptions, limits: HttpLimits, deadline: AbortSignal): CheckChannel {
  const { url } = opts;
  if (!(url instanceof URL)) return new StdioChannel(url, limits, deadline);
  const legacy = opts.transport === 'sse' || ((opts.transport ?? 'auto') === 'auto' && /\/sse\/?$/i.test(url.pathname));
  return legacy ? new LegacySseChannel(url, limits, deadline) : new CheckHttp(url, limits, deadline);
}
import { CheckJudge } from './judge.ts';
import { factsOf, sessionHeaders, type ProbeContext } from './probe.ts';
import { PROBES } from './probes.ts';
import { exitCodeOf, summarize, type CheckReport, type ProbeResult } from './report.ts';

export interface CheckOptions {
  /** The server: an HTTP endpoint, or a command to run over stdio. */
  url: URL | StdioTarget;
  /** How an HTTP endpoint is spoken to: Streamable HTTP, the legacy HTTP+SSE transport, or auto (legacy when the path ends in /sse). */
  transport?: 'auto' | 'sse' | 'streamable-http';
  /** `auto` (2026-07-28 first, then the legacy handshake) or one version. */
  protocol: string;
  /** Sent with every probe (credentials: `Authorization: Bearer ...`). */
  headers: Record<string, string>;
  /** Tools the argument probes may call; none given: any tool the probe judges safe. */
  safeTools: readonly string[];
  /** false: no tools/call at all. */
  toolCalls: boolean;
  /** Whole run, per probe, per connect (ms); bytes read per answer. */
  timeoutMs: number;
  probeTimeoutMs: number;
  connectTimeoutMs: number;
  maxBytes: number;
  clientVersion: string;
}

/** The URL as reports show it: no credentials, no query or fragment (a query may hold a token); a stdio server as its command. */
export function displayUrl(url: URL | StdioTarget): string {
  if (!(url instanceof URL)) return `stdio: ${url.command}${url.args.length > 0 ? ` (${url.args.length} arguments)` : ''}`;
  const u = new URL(url.href);
  u.username = '';
  u.password = '';
  u.search = '';
  u.hash = '';
  return u.href;
}

export async function runCheck(opts: CheckOptions): Promise<CheckReport> {
  const started = Date.now();
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), opts.timeoutMs);
  timer.unref();
  const limits = { connectTimeoutMs: opts.connectTimeoutMs, probeTimeoutMs: opts.probeTimeoutMs, maxBytes: opts.maxBytes };
  const http = channelFor(opts, limits, deadline.signal);
  const judge = new CheckJudge();
  const userHeaders = Object.fromEntries(Object.entries(opts.headers).map(([k, v]) => [k.toLowerCase(), v]));
  const deps: ExecDeps = { http, judge, userHeaders, probeTimeoutMs: opts.probeTimeoutMs };
  let id = 0;
  const nextId = (): number => ++id;
  const tag = randomBytes(4).toString('hex');
  const base = (version: string, sessionId?: string): ProbeContext => ({
    version,
    era: eraOf(version) ?? 'legacy',
    sessionId,
    capabilities: undefined,
    tools: new Map(),
    toolList: [],
    toolCalls: opts.toolCalls,
    safeTools: opts.safeTools,
    tag,
    id: nextId(),
    clientVersion: opts.clientVersion,
  });

  try {
    const era = await chooseEra({ deps, requested: opts.protocol, context: base, nextId });
    const probes: ProbeResult[] = [...era.results];
    /** Every message the server sent the probes: what tells its framework. */
    const answers: Message[] = [];
    if (era.reach.status === 'ok') {
      if (era.used === undefined) {
        for (const def of PROBES) probes.push(skipped(def, undefined, 'no protocol version could be agreed with the server'));
      } else {
        probes.push(...(await runProbes(deps, era, base, nextId, deadline.signal, answers)));
      }
    }
    await endSession(http, userHeaders, era);
    const framework = recognizeFramework(era.server, answers);
    const summary = summarize(probes);
    return {
      tool: { name: 'mcp-warden', version: opts.clientVersion },
      target: displayUrl(opts.url),
      startedAt: new Date(started).toISOString(),
      durationMs: Date.now() - started,
      protocol: { requested: opts.protocol, spoken: era.spoken, used: era.used, note: era.note },
      server: era.server,
      ...(framework ? { framework } : {}),
      reach: era.reach,
      probes: withFrameworkFixes(probes, framework?.framework),
      summary,
      exitCode: exitCodeOf(era.reach.status, summary),
    };
  } finally {
    clearTimeout(timer);
    await http.close();
  }
}

async function runProbes(
  deps: ExecDeps,
  era: EraOutcome,
  base: (v: string, sid?: string) => ProbeContext,
  nextId: () => number,
  deadline: AbortSignal,
  answers: Message[],
): Promise<ProbeResult[]> {
  const version = era.used!;
  const authorization = deps.userHeaders.authorization;
  const session = deps.judge.session(eraOf(version) === 'modern' ? undefined : era.sessionId, authorization, deps.http.via);
  const toolList: unknown[] = [];
  const out: ProbeResult[] = [];
  for (const def of PROBES) {
    const ctx: ProbeContext = {
      ...base(version, era.sessionId),
      capabilities: session.serverCapabilities ?? era.capabilities,
      tools: session.tools,
      toolList,
    };
    if (!def.eras.includes(ctx.era) || (def.applies && !def.applies(factsOf(ctx)))) continue;
    if (def.http && deps.http.via) {
      out.push(
        skipped(
          def,
          version,
          `an HTTP probe; the server speaks ${deps.http.via.wire === 'stdio' ? 'stdio' : 'the legacy HTTP+SSE transport'}`,
        ),
      );
      continue;
    }
    if (deadline.aborted) {
      out.push(skipped(def, version, 'the overall deadline (--timeout) passed'));
      continue;
    }
    const done = await execute(deps, def, ctx, nextId);
    out.push(done.result);
    for (const o of done.observed) answers.push(...o.messages);
    if (def.id === 'tools-list') {
      for (const o of done.observed)
        for (const m of o.messages)
          if (m.kind === 'result')
            toolList.push(...(Array.isArray(asRecord(m.result)?.tools) ? (asRecord(m.result)!.tools as unknown[]) : []));
    }
    // A second initialize may have opened a session of its own: end it.
    const issued = done.answer?.headers['mcp-session-id'];
    if (typeof issued === 'string' && issued !== era.sessionId) {
      await deleteSession(deps.http, deps.userHeaders, issued, version);
    }
  }
  return out;
}

/** Each finding with the fix in the server's framework, where its rule's explanation has one. */
function withFrameworkFixes(probes: ProbeResult[], framework: FrameworkId | undefined): ProbeResult[] {
  if (!framework) return probes;
  return probes.map((p) => ({
    ...p,
    findings: p.findings.map((f) => {
      const frameworkFix = frameworkFixLine(f.rule, framework);
      return frameworkFix ? { ...f, frameworkFix } : f;
    }),
  }));
}

async function deleteSession(http: CheckChannel, userHeaders: Record<string, string>, sessionId: string, version: string): Promise<void> {
  const headers = { ...userHeaders, ...sessionHeaders({ sessionId, version, era: 'legacy' }) };
  await http.send({ method: 'DELETE', headers, body: undefined, awaitId: undefined }, false);
}

/** Ends every session the run opened on the server (DELETE), politely and without judging. */
async function endSession(http: CheckChannel, userHeaders: Record<string, string>, era: EraOutcome): Promise<void> {
  for (const s of era.openSessions) await deleteSession(http, userHeaders, s.sessionId, s.version);
}
