// Issue 11, "Done when": the precision corpus (test/fixtures/corpus/) through the real proxy, under
// the default audit policy and under config/enforce.yaml. Legitimate cases: no finding of severity
// error or warning, no rewrite or block, and the client gets the server's bytes unchanged. Failure
// cases: every expected rule fires (under both policies), and under enforce.yaml the rewrite (or
// block) happens where the case expects one. One upstream and one proxy per policy serve every
// case (each run is a session of its own); the cases run several at a time.
//
// Cases today's rules get wrong are marked todo (test/fixtures/corpus/known-failing.ts): the suite
// stays green while the rules are fixed; delete a case's line there once it passes. The summary
// test prints one line of counts per rule (legitimate cases judged, false positives, failures
// flagged, misses), and the README's table of those counts (between `<!-- corpus -->` markers) must
// equal it (UPDATE_README=1 rewrites it); CORPUS_REPORT=<file> also writes every run's findings as JSON.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { loadPolicyFile } from '../../src/config/load.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { pageOf } from '../helpers/doc-blocks.ts';
import { RULES } from '../../src/rules/index.ts';
import { FAILURES, LEGIT, type CorpusCase, type FailureCase, type LegitCase } from '../fixtures/corpus/index.ts';
import { KNOWN_FAILING } from '../fixtures/corpus/known-failing.ts';
import { runAll, startCorpusUpstream, type CorpusRun, type CorpusUpstream, type RunOutcome } from '../helpers/corpus-runner.ts';
import type { LogRecord } from '../helpers/log-capture.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';

/** Runs in flight per proxy (two proxies run at once). */
const CONCURRENCY = 6;
const POLICIES = ['audit', 'enforce'] as const;
type PolicyName = (typeof POLICIES)[number];

const RULE_INFO = new Map(RULES.map((r) => [r.id, r]));
const isServerRule = (id: unknown): boolean => typeof id === 'string' && RULE_INFO.get(id)?.party === 'server';
const serious = (r: LogRecord): boolean => r.msg === 'violation' && (r.severity === 'error' || r.severity === 'warning');
const short = (v: unknown, max = 140): string => {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s === undefined ? String(v) : s.length > max ? `${s.slice(0, max)}…` : s;
};

const ALL_CASES: readonly CorpusCase[] = [...LEGIT, ...FAILURES];

interface RuleCounts {
  judged: number;
  falsePositives: number;
  failures: number;
  flagged: number;
  misses: number;
  rewritesExpected: number;
  rewriteMisses: number;
}

/** The README's table: per rule, legitimate results judged and wrongly flagged, failures flagged and missed, enforce rewrites. */
function corpusTable(
  rules: Record<string, RuleCounts>,
  legit: { cases: number; clean: number },
  failures: { cases: number; caught: number },
): string {
  const rows = Object.entries(rules)
    .filter(([id, r]) => id !== '*' || r.failures > 0)
    .map(
      ([id, r]) =>
        `| ${id === '*' ? 'any server rule' : `\`${id}\``} | ${r.judged} | ${r.falsePositives} | ${r.failures} | ${r.flagged} | ${r.misses} | ${r.rewritesExpected === 0 ? '-' : `${r.rewritesExpected - r.rewriteMisses}/${r.rewritesExpected}`} |`,
    );
  return [
    `Legitimate results: ${legit.clean} of ${legit.cases} clean (no error/warning finding, no rewrite, the server's bytes). Failures: ${failures.caught} of ${failures.cases} caught (every expected rule fires, and enforce.yaml rewrites or blocks where the case expects it).`,
    '',
    '| rule | legitimate results judged | false positives | failure cases | flagged | missed | enforce rewrites |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

const outcomes = new Map<string, RunOutcome[]>();
let upstream: CorpusUpstream | undefined;
const proxies: Partial<Record<PolicyName, TestProxy>> = {};
let wallMs = 0;

/** What is wrong with a legitimate run (empty: it passed). */
function legitProblems(o: RunOutcome): string[] {
  const out: string[] = [];
  if (o.harnessError) out.push(`harness: ${o.harnessError}`);
  for (const v of o.records.filter(serious))
    out.push(`false positive ${String(v.rule)} (${String(v.severity)}) at ${String(v.pointer)}: ${short(v.evidence)}`);
  for (const c of o.records.filter((r) => r.msg === 'rewrite' || r.msg === 'block')) out.push(`${String(c.msg)} by ${short(c.rules)}`);
  if (!o.sent) out.push('the request did not reach the server');
  else {
    if (o.status !== o.sent.status) out.push(`status ${o.status}, the server sent ${o.sent.status}`);
    if (!o.body.equals(o.sent.body)) out.push(`the client got other bytes than the server sent: ${short(o.body.toString('utf8'), 200)}`);
  }
  return out;
}

/** Whether `rule` ('*': any server rule) fired at error or warning severity in a run. */
function fired(o: RunOutcome, rule: string): boolean {
  if (rule === '*') return o.records.some((r) => serious(r) && isServerRule(r.rule));
  return o.records.some((r) => r.msg === 'violation' && r.rule === rule);
}

/** Whether the run's enforcement happened as the case expects (only asked under enforce). */
function enforced(o: RunOutcome, c: FailureCase): string[] {
  const e = c.enforce;
  if (!e || o.run.policy !== 'enforce') return [];
  const out: string[] = [];
  const records = o.records.filter((r) => r.msg === e.action);
  const named = records.flatMap((r) => (Array.isArray(r.rules) ? (r.rules as unknown[]) : []));
  if (records.length === 0) out.push(`no ${e.action} under enforce.yaml`);
  else for (const rule of e.rules) if (!named.includes(rule)) out.push(`the ${e.action} does not name ${rule} (it names ${short(named)})`);
  const body = o.body.toString('utf8');
  for (const g of e.gone ?? [])
    if (body.includes(g) || body.includes(JSON.stringify(g).slice(1, -1)))
      out.push(`${JSON.stringify(g)} reached the client under enforce`);
  return out;
}

/**
 * Whether the server got the case's message in this run: enforce.yaml blocks a client body that is
 * no JSON-RPC (request-envelope) before it is forwarded, so the server's rules fire under audit only.
 */
const serverSaw = (o: RunOutcome, c: FailureCase): boolean =>
  !(o.run.policy === 'enforce' && c.enforce?.action === 'block' && c.enforce.rules.every((r) => RULE_INFO.get(r)?.party === 'client'));

function failureProblems(o: RunOutcome, c: FailureCase): string[] {
  const out: string[] = [];
  if (o.harnessError) out.push(`harness: ${o.harnessError}`);
  // Audit mode logs; it changes nothing (the proxy's own answer to a dropped connection is no rewrite record).
  if (o.run.policy === 'audit')
    for (const r of o.records.filter((x) => x.msg === 'rewrite' || x.msg === 'block'))
      out.push(`${String(r.msg)} under audit by ${short(r.rules)}`);
  for (const rule of serverSaw(o, c) ? c.rules : []) {
    if (!fired(o, rule)) {
      const got = o.records.filter((r) => r.msg === 'violation').map((r) => `${String(r.rule)}`);
      out.push(
        `missed ${rule === '*' ? 'any server finding' : rule} (fired: ${got.length > 0 ? [...new Set(got)].join(', ') : 'nothing'})`,
      );
    }
  }
  out.push(...enforced(o, c));
  return out;
}

const problemsOf = (o: RunOutcome): string[] => (o.run.kase.kind === 'legit' ? legitProblems(o) : failureProblems(o, o.run.kase));

describe('precision corpus (issue 11)', () => {
  before(async () => {
    const loaded = await loadPolicyFile('config/enforce.yaml', { rewritable: REWRITABLE });
    assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.errors));
    const enforce = loaded.policy;
    upstream = await startCorpusUpstream();
    proxies.audit = await startProxy(upstream.url);
    proxies.enforce = await startProxy(upstream.url, { policy: () => enforce });
    let n = 0;
    const runs: Record<PolicyName, CorpusRun[]> = { audit: [], enforce: [] };
    for (const policy of POLICIES)
      for (const kase of ALL_CASES) for (const version of kase.versions) runs[policy].push({ key: `c${++n}`, kase, version, policy });
    const started = Date.now();
    const results = await Promise.all(POLICIES.map((p) => runAll(proxies[p]!, upstream!, runs[p], CONCURRENCY)));
    wallMs = Date.now() - started;
    for (const o of results.flat()) {
      const list = outcomes.get(o.run.kase.id) ?? [];
      list.push(o);
      outcomes.set(o.run.kase.id, list);
    }
  });

  after(async () => {
    await Promise.all(POLICIES.map((p) => proxies[p]?.close()));
    await upstream?.close();
  });

  test('the corpus is as large as issue 11 asks, with unique ids and known rule ids', () => {
    assert.ok(LEGIT.length >= 200, `${LEGIT.length} legitimate cases`);
    assert.ok(FAILURES.length >= 100, `${FAILURES.length} failure cases`);
    const ids = ALL_CASES.map((c) => c.id);
    assert.equal(new Set(ids).size, ids.length, 'case ids are unique');
    for (const c of FAILURES) {
      for (const r of [...c.rules, ...(c.enforce?.rules ?? [])]) assert.ok(r === '*' || RULE_INFO.has(r), `${c.id}: unknown rule ${r}`);
    }
    for (const id of Object.keys(KNOWN_FAILING)) assert.ok(ids.includes(id), `known-failing.ts names no case ${id}`);
  });

  for (const kase of ALL_CASES) {
    const todo = KNOWN_FAILING[kase.id];
    const label =
      kase.kind === 'legit' ? `legit ${kase.category}/${kase.id}` : `failure ${kase.category}/${kase.id} -> ${kase.rules.join(', ')}`;
    test(label, todo ? { todo } : {}, () => {
      const runs = outcomes.get(kase.id) ?? [];
      assert.equal(runs.length, kase.versions.length * POLICIES.length, 'every version ran under both policies');
      const problems = runs.flatMap((o) => problemsOf(o).map((p) => `${o.run.version} ${o.run.policy}: ${p}`));
      assert.deepEqual(
        problems,
        [],
        `${kase.id}: ${kase.kind === 'legit' ? (kase as LegitCase).why : (kase as FailureCase).why}\n${problems.join('\n')}`,
      );
    });
  }

  test('summary: counts per rule', (t) => {
    const rules: Record<string, RuleCounts> = {};
    const row = (id: string) =>
      (rules[id] ??= { judged: 0, falsePositives: 0, failures: 0, flagged: 0, misses: 0, rewritesExpected: 0, rewriteMisses: 0 });
    for (const r of RULES) row(r.id);
    row('*');
    const failing: string[] = [];
    for (const kase of ALL_CASES) {
      const runs = outcomes.get(kase.id) ?? [];
      if (runs.some((o) => problemsOf(o).length > 0)) failing.push(kase.id);
      if (kase.kind === 'legit') {
        // The corpus is Streamable HTTP traffic: a rule of another transport never judges it.
        const judges = (r: (typeof RULES)[number]) => r.transports === undefined || r.transports.includes('streamable-http');
        for (const r of RULES) if (judges(r) && kase.versions.some((v) => r.versions.includes(v))) row(r.id).judged++;
        const fp = new Set(runs.flatMap((o) => o.records.filter(serious).map((v) => String(v.rule))));
        for (const id of fp) row(id).falsePositives++;
      } else {
        for (const rule of kase.rules) {
          row(rule).failures++;
          if (runs.length > 0 && runs.every((o) => !serverSaw(o, kase) || fired(o, rule))) row(rule).flagged++;
          else row(rule).misses++;
        }
        if (kase.enforce) {
          const enforceRuns = runs.filter((o) => o.run.policy === 'enforce');
          for (const rule of kase.enforce.rules.length > 0 ? kase.enforce.rules : ['*']) {
            row(rule).rewritesExpected++;
            if (enforceRuns.some((o) => enforced(o, kase).length > 0)) row(rule).rewriteMisses++;
          }
        }
      }
    }
    const used = Object.fromEntries(Object.entries(rules).filter(([, v]) => v.falsePositives + v.failures > 0 || v.judged > 0));
    const legitClean = LEGIT.filter((c) => !failing.includes(c.id)).length;
    const failuresCaught = FAILURES.filter((c) => !failing.includes(c.id)).length;
    const todoPassing = Object.keys(KNOWN_FAILING).filter((id) => !failing.includes(id));
    const newlyFailing = failing.filter((id) => KNOWN_FAILING[id] === undefined);
    const runCount = [...outcomes.values()].reduce((n, l) => n + l.length, 0);
    const summary = {
      legit: { cases: LEGIT.length, clean: legitClean },
      failures: { cases: FAILURES.length, caught: failuresCaught },
      runs: runCount,
      wallMs,
      rules: used,
      todoNowPassing: todoPassing,
      failingNotTodo: newlyFailing,
    };
    t.diagnostic(`precision-corpus ${JSON.stringify(summary)}`);
    const file = process.env.CORPUS_REPORT;
    if (file) {
      const detail = ALL_CASES.map((kase) => ({
        id: kase.id,
        kind: kase.kind,
        category: kase.category,
        lang: kase.lang,
        versions: kase.versions,
        ...(kase.kind === 'failure' ? { rules: kase.rules, enforce: kase.enforce } : {}),
        runs: (outcomes.get(kase.id) ?? []).map((o) => ({
          version: o.run.version,
          policy: o.run.policy,
          problems: problemsOf(o),
          findings: o.records
            .filter((r) => r.msg === 'violation')
            .map((r) => ({ rule: r.rule, severity: r.severity, pointer: r.pointer, evidence: r.evidence, action: r.action })),
        })),
      }));
      writeFileSync(file, JSON.stringify({ summary, cases: detail }, null, 1));
    }
    assert.ok(runCount > 0);
    const table = corpusTable(used, summary.legit, summary.failures);
    const page = pageOf('corpus');
    const [before, rest] = page.text.split('<!-- corpus -->');
    const after = rest?.split('<!-- /corpus -->')[1];
    assert.ok(before !== undefined && after !== undefined, `${page.path} has <!-- corpus --> ... <!-- /corpus --> markers`);
    const updated = `${before}<!-- corpus -->\n${table}\n<!-- /corpus -->${after}`;
    if (process.env.UPDATE_README === '1') writeFileSync(new URL(`../../${page.path}`, import.meta.url), updated);
    else assert.equal(page.text, updated, `${page.path}'s corpus table reports these counts (UPDATE_README=1 rewrites it)`);
  });
});
