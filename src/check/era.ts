// Which versions the server speaks, the way a dual-era client finds out: server/discover under
// the newest modern version first, then the legacy initialize handshake proposing the newest legacy
// one ("Backward Compatibility" in
// https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning and
// https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http).
// With --protocol only the era of that version is tried. Also where the run stops early: a server
// that cannot be reached, answers 401 (needs credentials), or redirects (not followed).
import { noMcpAnswer } from '../mcp/media-type.ts';
import { eraOf, LATEST_OF } from '../mcp/versions.ts';
import { asRecord } from '../codec/json-value.ts';
import { excerpt } from '../redact/excerpt.ts';
import type { Answer } from './expect.ts';
import { execute, probeFinding, ruleFindings, type ExecDeps, type Executed } from './exec.ts';
import type { ProbeContext } from './probe.ts';
import { DISCOVER, INITIALIZE } from './probes.ts';
import { verdictOf, type CheckReport, type ProbeResult } from './report.ts';

export interface EraOutcome {
  results: ProbeResult[];
  reach: CheckReport['reach'];
  spoken: string[];
  used: string | undefined;
  note: string | undefined;
  server: CheckReport['server'];
  /** The legacy session the probes run in, if the server issued one. */
  sessionId: string | undefined;
  capabilities: Record<string, unknown> | undefined;
  /** Sessions to end (DELETE) when the run is over. */
  openSessions: Array<{ sessionId: string; version: string }>;
}

interface EraInput {
  deps: ExecDeps;
  requested: string;
  context: (version: string) => ProbeContext;
  nextId: () => number;
}

const header = (a: Answer, name: string): string | undefined => {
  const v = a.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** Whether an answer came as an answer: a 2xx, or a message on the session's stream. */
const delivered = (a: Answer): boolean => (a.status === undefined ? a.wire !== undefined && a.failure === undefined : a.status < 300);

/** Why the run cannot go on past this answer, if it cannot. */
function stopper(a: Answer, what: string): CheckReport['reach'] | undefined {
  if (a.status === undefined && a.failure?.reason === 'unreachable')
    return { status: 'unreachable', detail: a.failure.detail, challenge: undefined };
  if (a.status === 401) return { status: 'needs-credentials', detail: `HTTP 401 to ${what}`, challenge: header(a, 'www-authenticate') };
  if (a.status !== undefined && a.status >= 300 && a.status < 400) {
    return {
      status: 'unreachable',
      detail: `HTTP ${a.status} to ${what}: redirected to ${excerpt(header(a, 'location') ?? '(no Location)', 100)} (not followed; check the URL given)`,
      challenge: undefined,
    };
  }
  return undefined;
}

/**
 * No MCP endpoint at the URL: every first request answered as nothing MCP answers (a web page, or
 * a 404/405 with neither JSON nor a stream), typically the server's root or another path.
 */
function noEndpoint(answers: readonly Answer[]): CheckReport['reach'] | undefined {
  if (answers.length === 0 || !answers.every((a) => a.status !== undefined && noMcpAnswer(a.status, a.contentType ?? ''))) return undefined;
  const got = [...new Set(answers.map((a) => `HTTP ${a.status}${a.contentType ? ` (${a.contentType})` : ''}`))].join(', ');
  return { status: 'no-mcp-endpoint', detail: `${got} to the first MCP requests`, challenge: undefined };
}

const serverOf = (info: unknown): CheckReport['server'] => {
  const r = asRecord(info);
  return r
    ? { name: typeof r.name === 'string' ? r.name : undefined, version: typeof r.version === 'string' ? r.version : undefined }
    : undefined;
};

/** A probe of an era the server turned out not to speak: only the rules' findings count, else it is skipped. */
function notSpoken(done: Executed, findings: ProbeResult['findings'], why: string): ProbeResult {
  const r = done.result;
  // A server that lets a client of the other era wait until it gives up is a fault all the same.
  if (r.verdict === 'timeout') return r;
  return { ...r, findings, verdict: findings.length > 0 ? verdictOf(findings) : 'skip', got: `${r.got} (${why})`, fix: findings[0]?.fix };
}

/** A modern-only server SHOULD name its versions in the error it gives a legacy initialize (2026-07-28 basic/versioning, "Backward Compatibility"). */
function namesVersions(a: Answer): boolean {
  const data = asRecord(a.error?.data);
  if (Array.isArray(data?.supported)) return true;
  return /\d{4}-\d{2}-\d{2}/.test(typeof a.error?.message === 'string' ? a.error.message : '');
}

export async function chooseEra({ deps, requested, context, nextId }: EraInput): Promise<EraOutcome> {
  const out: EraOutcome = {
    results: [],
    reach: { status: 'ok', detail: undefined, challenge: undefined },
    spoken: [],
    used: undefined,
    note: undefined,
    server: undefined,
    sessionId: undefined,
    capabilities: undefined,
    openSessions: [],
  };
  const auto = requested === 'auto';
  let modern: Executed | undefined;
  let legacy: Executed | undefined;
  let modernVersion: string | undefined;

  const asked = auto ? undefined : eraOf(requested);
  if (auto || asked === 'modern') {
    modernVersion = auto ? LATEST_OF.modern : requested;
    modern = await execute(deps, DISCOVER, context(modernVersion), nextId);
    const stop = modern.answer && stopper(modern.answer, 'server/discover');
    if (stop) return { ...out, results: [{ ...modern.result, verdict: 'skip', findings: [], fix: undefined }], reach: stop };
  }
  const discovered = modern?.answer?.result;
  const modernOk = discovered !== undefined && delivered(modern!.answer!);

  if (auto || asked !== 'modern') {
    legacy = await execute(deps, INITIALIZE, context(auto ? LATEST_OF.legacy : requested), nextId);
    const stop = legacy.answer && !modernOk ? stopper(legacy.answer, 'initialize') : undefined;
    if (stop)
      return {
        ...out,
        results: [...(modern ? [modern.result] : []), { ...legacy.result, verdict: 'skip', findings: [], fix: undefined }],
        reach: stop,
      };
  }
  const init = legacy?.answer?.result;
  const negotiated = typeof init?.protocolVersion === 'string' && delivered(legacy!.answer!) ? init.protocolVersion : undefined;
  const sessionId = legacy?.answer ? header(legacy.answer, 'mcp-session-id') : undefined;

  if (modernOk) {
    const supported = Array.isArray(discovered.supportedVersions)
      ? discovered.supportedVersions.filter((v): v is string => typeof v === 'string')
      : [];
    out.spoken.push(...supported);
    if (!out.spoken.includes(modernVersion!)) out.spoken.push(modernVersion!);
    out.used = modernVersion;
    out.capabilities = asRecord(discovered.capabilities);
    out.server = serverOf(asRecord(discovered._meta)?.['io.modelcontextprotocol/serverInfo'] ?? discovered.serverInfo);
    out.results.push(modern!.result);
    if (legacy) {
      if (negotiated) {
        if (!out.spoken.includes(negotiated)) out.spoken.push(negotiated);
        if (sessionId) out.openSessions.push({ sessionId, version: negotiated });
        out.results.push(legacy.result);
      } else {
        const findings = legacy.observed.flatMap(ruleFindings);
        if (legacy.answer && (legacy.answer.status ?? 0) >= 400 && !namesVersions(legacy.answer)) {
          findings.push(
            probeFinding('initialize', {
              severity: 'warning',
              message: `a server that speaks only ${modernVersion} answered initialize without naming its supported versions`,
              pointer: '/response/error',
              evidence: excerpt(legacy.answer.error?.value ?? legacy.result.got),
              fix: `name the supported versions in the rejection, e.g. -32022 with data {"supported": ["${modernVersion}"]}`,
            }),
          );
        }
        out.results.push(notSpoken(legacy, findings, 'the server does not speak the legacy era'));
      }
    }
  } else if (negotiated) {
    out.spoken.push(negotiated);
    out.used = negotiated;
    out.sessionId = sessionId;
    out.capabilities = asRecord(init!.capabilities);
    out.server = serverOf(init!.serverInfo);
    if (sessionId) out.openSessions.push({ sessionId, version: negotiated });
    if (!auto && negotiated !== requested)
      out.note = `asked for ${requested}; the server negotiated ${negotiated}, and the probes ran under it`;
    if (modern) {
      // A dual-era client's probe of a legacy server (basic/versioning, "Backward Compatibility"): judged as such.
      const session = deps.judge.session(sessionId, deps.userHeaders.authorization, deps.http.via);
      const findings = modern.observed
        .flatMap((o) => [...o.exchanges.flatMap((j) => deps.judge.rejudge(j, session)), ...o.postFindings])
        .map((f) => ({ rule: f.rule, severity: f.severity, message: f.message, pointer: f.pointer, evidence: f.evidence, fix: f.fix }));
      out.results.push(notSpoken(modern, findings, `the server does not speak ${modernVersion}`));
    }
    out.results.push(legacy!.result);
  } else {
    const answers = [modern?.answer, legacy?.answer].filter((a): a is Answer => a !== undefined);
    const wrongPath = noEndpoint(answers);
    if (wrongPath) {
      // The URL's fault, not the server's: nothing to blame it for.
      const asked = [modern, legacy].filter((d): d is Executed => d !== undefined);
      return { ...out, results: asked.map((d) => ({ ...d.result, verdict: 'skip', findings: [], fix: undefined })), reach: wrongPath };
    }
    for (const done of [modern, legacy]) if (done) out.results.push(done.result);
    if (answers.length > 0 && answers.every((a) => a.status === undefined && (a.wire === undefined || a.failure !== undefined))) {
      const timedOut = answers.every((a) => a.failure?.reason === 'timeout');
      out.reach = {
        status: 'unreachable',
        detail: timedOut ? `no answer within ${deps.probeTimeoutMs} ms` : (answers[0]!.failure?.detail ?? 'no answer'),
        challenge: undefined,
      };
    }
  }
  return out;
}
