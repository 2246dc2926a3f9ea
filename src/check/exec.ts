// Runs one probe: builds its request, sends it, has the exchange correlated and judged like proxy
// traffic, holds the answer against the probe's expectation, and turns all of it into a result.
import type { IncomingHttpHeaders } from 'node:http';
import { pointer as jsonPointer } from '../codec/json-pointer.ts';
import { asRecord } from '../codec/json-value.ts';
import { excerpt } from '../redact/excerpt.ts';
import type { Finding, Report } from '../rules/types.ts';
import { answerOf, gotText, type Answer } from './expect.ts';
import type { CheckChannel, HttpAnswer } from './channel.ts';
import type { CheckJudge, Observed } from './judge.ts';
import type { ProbeContext, ProbeDefinition, ProbeRequest } from './probe.ts';
import { verdictOf, type CheckFinding, type ProbeResult } from './report.ts';

/** Pages of a paginated list a probe follows at most. */
const MAX_PAGES = 10;

export interface Executed {
  result: ProbeResult;
  /** undefined for a skipped probe. */
  observed: Observed[];
  answer: Answer | undefined;
}

const toCheck = (f: Pick<Finding, 'rule' | 'severity' | 'message' | 'pointer' | 'evidence' | 'fix'>): CheckFinding => ({
  rule: f.rule,
  severity: f.severity,
  message: f.message,
  pointer: f.pointer,
  evidence: f.evidence,
  fix: f.fix,
});

const TOOL_AT = /^\/response\/result\/tools\/(\d+)(?=\/|$)/;

/** A pointer into a tools list with the tool named instead of counted (`/response/result/tools/name=echo/...`), if it points into one. */
export function placeOf(pointer: string, response: unknown): string | undefined {
  const at = TOOL_AT.exec(pointer);
  if (!at) return undefined;
  const tools = asRecord(asRecord(response)?.result)?.tools;
  const name = Array.isArray(tools) ? asRecord(tools[Number(at[1])])?.name : undefined;
  // A function, not a string: a name's `$1` or `$&` must not be read as a replacement pattern.
  return typeof name === 'string' ? pointer.replace(TOOL_AT, () => jsonPointer('response', 'result', 'tools', `name=${name}`)) : undefined;
}

/** The rules' findings on an observed exchange (each placed in its answer): every judged exchange, then the POST as a whole. */
export const ruleFindings = (o: Observed): CheckFinding[] => [
  ...o.exchanges.flatMap((j) =>
    j.findings.map((f) => {
      const place = placeOf(f.pointer, j.completed.response?.value);
      return place ? { ...toCheck(f), place } : toCheck(f);
    }),
  ),
  ...o.postFindings.map(toCheck),
];

/** A finding of the probe's own expectation. */
export const probeFinding = (probe: string, r: Report): CheckFinding =>
  toCheck({
    rule: `probe/${probe}`,
    severity: r.severity ?? 'error',
    message: r.message,
    pointer: r.pointer,
    evidence: r.evidence,
    fix: r.fix,
  });

/** The one-line fix: the first error's (a rule aimed at the probe first), else the first warning's. */
export function fixOf(findings: readonly CheckFinding[], aimed: readonly string[]): string | undefined {
  for (const severity of ['error', 'warning'] as const) {
    const at = findings.filter((f) => f.severity === severity);
    const best = at.find((f) => aimed.includes(f.rule)) ?? at[0];
    if (best) return best.fix;
  }
  return undefined;
}

export function skipped(def: ProbeDefinition, version: string | undefined, why: string, expected = '-'): ProbeResult {
  return {
    probe: def.id,
    title: def.title,
    version,
    rules: def.rules,
    verdict: 'skip',
    expected,
    got: `skipped: ${why}`,
    fix: undefined,
    findings: [],
    request: undefined,
    status: undefined,
    durationMs: 0,
  };
}

const lower = (headers: Record<string, string>): IncomingHttpHeaders =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));

export interface ExecDeps {
  /** How probes reach the server (Streamable HTTP, legacy SSE, stdio). */
  http: CheckChannel;
  judge: CheckJudge;
  /** The user's --header values, sent with every probe. */
  userHeaders: Record<string, string>;
  probeTimeoutMs: number;
}

/** Sends a probe request and judges what came back. */
export async function exchange(deps: ExecDeps, req: ProbeRequest): Promise<Observed> {
  const headers = { ...deps.userHeaders, ...req.headers };
  const answer: HttpAnswer = await deps.http.send({ method: 'POST', headers, body: req.body, awaitId: req.id });
  return deps.judge.observe(lower(headers), req.body, answer, req.judgeAs, deps.http.via);
}

/** The same list request for the page after `cursor`, with a fresh id. */
function nextPage(req: ProbeRequest, cursor: string, id: number): ProbeRequest {
  const msg = JSON.parse(req.body) as { params?: Record<string, unknown> };
  return { ...req, id, body: JSON.stringify({ ...msg, id, params: { ...msg.params, cursor } }) };
}

export async function execute(deps: ExecDeps, def: ProbeDefinition, ctx: ProbeContext, nextId: () => number): Promise<Executed> {
  const built = def.build(ctx);
  if ('skip' in built) return { result: skipped(def, ctx.version, built.skip), observed: [], answer: undefined };
  const expectation = def.expect(ctx);
  const observed = [await exchange(deps, built)];
  const answer = answerOf(observed[0]!);
  for (let page = 1, req = built; def.pages && page < MAX_PAGES; page++) {
    const cursor = asRecord(answerOf(observed.at(-1)!).result)?.nextCursor;
    if (typeof cursor !== 'string') break;
    req = nextPage(req, cursor, nextId());
    observed.push(await exchange(deps, req));
  }
  const findings = observed.flatMap(ruleFindings);
  const failure = answer.failure;
  if (failure && (answer.status === undefined || failure.reason === 'timeout')) {
    const message =
      failure.reason === 'timeout'
        ? `no complete answer within ${deps.probeTimeoutMs} ms`
        : `the exchange failed: ${failure.reason} (${excerpt(failure.detail, 80)})`;
    findings.push(
      probeFinding(def.id, {
        message,
        pointer: '/response',
        evidence: gotText(answer),
        fix: 'answer every request promptly with its JSON-RPC response',
        severity: 'error',
      }),
    );
  } else {
    // A rule aimed at the probe that already said it (at the same place, as severely) says it better.
    const rank = { info: 0, warning: 1, error: 2 } as const;
    const said = findings.filter((f) => def.rules.includes(f.rule));
    const covered = (r: Report): boolean =>
      said.some(
        (f) => (f.pointer.startsWith(r.pointer) || r.pointer.startsWith(f.pointer)) && rank[f.severity] >= rank[r.severity ?? 'error'],
      );
    for (const r of expectation.check(answer)) if (!covered(r)) findings.push(probeFinding(def.id, r));
  }
  const verdict = failure?.reason === 'timeout' ? 'timeout' : verdictOf(findings);
  return {
    result: {
      probe: def.id,
      title: def.title,
      version: ctx.version,
      rules: def.rules,
      verdict,
      expected: expectation.text,
      got: gotText(answer),
      fix: verdict === 'pass' ? undefined : (fixOf(findings, def.rules) ?? expectation.fix),
      findings,
      request: { method: 'POST', headers: built.headers, body: built.body },
      status: answer.status,
      durationMs: observed.reduce((n, o) => n + o.answer.durationMs, 0),
    },
    observed,
    answer,
  };
}
