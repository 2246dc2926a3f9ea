// `check --baseline FILE`: findings a team has accepted (the conformance suite's expected-failures
// pattern). A finding is known by its probe, rule and place (its message may hold a random tag); a
// baselined finding is reported as accepted and fails nothing, so the exit code says whether
// anything new broke. `--update-baseline` writes the findings of this run as the baseline.
import { readFile, writeFile } from 'node:fs/promises';
import type { CheckFinding, CheckReport, ProbeResult } from './report.ts';
import { summarize, exitCodeOf } from './report.ts';

export const BASELINE_VERSION = 1;

/** One accepted finding, as the baseline file holds it (`message` and `severity` for people; `place`, when given, is what is matched instead of `pointer`). */
export interface BaselineEntry {
  probe: string;
  rule: string;
  pointer: string;
  place?: string;
  severity: string;
  message: string;
}

export interface BaselineFile {
  'mcp-warden-baseline': typeof BASELINE_VERSION;
  target: string;
  createdAt: string;
  findings: BaselineEntry[];
}

/** A finding is known by its probe, rule and place (a tool by its name: a reordered list keeps what it accepted). */
const keyOf = (probe: string, f: Pick<CheckFinding, 'rule' | 'pointer' | 'place'>): string =>
  `${probe}\u0000${f.rule}\u0000${f.place ?? f.pointer}`;

/** The baseline of a report: its error and warning findings. */
export function baselineOf(report: CheckReport, now: Date): BaselineFile {
  const findings = report.probes.flatMap((p) =>
    p.findings
      .filter((f) => f.severity !== 'info')
      .map((f) => ({
        probe: p.probe,
        rule: f.rule,
        pointer: f.pointer,
        ...(f.place ? { place: f.place } : {}),
        severity: f.severity,
        message: f.message,
      })),
  );
  return { 'mcp-warden-baseline': BASELINE_VERSION, target: report.target, createdAt: now.toISOString(), findings };
}

/** Reads a baseline file; throws with a sentence saying what is wrong with it. */
export async function readBaseline(path: string): Promise<BaselineFile> {
  let value: Partial<BaselineFile>;
  try {
    value = JSON.parse(await readFile(path, 'utf8')) as Partial<BaselineFile>;
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
    throw new Error(`${path}: ${why}; write a baseline with --update-baseline`);
  }
  if (value['mcp-warden-baseline'] !== BASELINE_VERSION || !Array.isArray(value.findings))
    throw new Error(`${path} is not an mcp-warden check baseline (version ${BASELINE_VERSION}); write one with --update-baseline`);
  return value as BaselineFile;
}

export const writeBaseline = (path: string, baseline: BaselineFile): Promise<void> =>
  writeFile(path, `${JSON.stringify(baseline, null, 2)}\n`);

/**
 * The report with the baseline applied: a finding it lists is marked accepted and no longer counts
 * (summary, exit code); entries no finding matched any more are reported as fixed.
 */
export function applyBaseline(report: CheckReport, baseline: BaselineFile, file: string): CheckReport {
  const accepted = new Map(baseline.findings.map((e) => [keyOf(e.probe, e), e]));
  // An entry written before places existed (no `place`) still accepts the finding at its pointer.
  const entryOf = (probe: string, f: CheckFinding): BaselineEntry | undefined => {
    const entry = accepted.get(keyOf(probe, f));
    if (entry || f.place === undefined) return entry;
    const unplaced = accepted.get(keyOf(probe, { rule: f.rule, pointer: f.pointer }));
    return unplaced?.place === undefined ? unplaced : undefined;
  };
  const seen = new Set<BaselineEntry>();
  let count = 0;
  const probes: ProbeResult[] = report.probes.map((p) => ({
    ...p,
    findings: p.findings.map((f): CheckFinding => {
      const entry = entryOf(p.probe, f);
      if (!entry) return f;
      seen.add(entry);
      count++;
      return { ...f, accepted: true as const };
    }),
  }));
  const counted = probes.map((p) => ({ ...p, findings: p.findings.filter((f) => !f.accepted) }));
  const summary = { ...summarize(counted), accepted: count };
  // A run that did not reach the server fixed nothing.
  const fixed = report.reach.status === 'ok' ? baseline.findings.filter((e) => !seen.has(e)) : [];
  return {
    ...report,
    probes,
    summary,
    exitCode: exitCodeOf(report.reach.status, summary),
    baseline: { file, accepted: count, fixed: fixed.map(({ probe, rule, pointer }) => ({ probe, rule, pointer })) },
  };
}
