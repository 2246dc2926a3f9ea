// The report as SARIF 2.1.0, for code scanning: one run, the rules that produced a result as
// reportingDescriptors (catalogue rules with their summary, spec source, their explanation as
// help and its docs link as helpUri; `probe/<id>` for a probe's own expectation), one result per finding located at the server's URL with the probe as
// its logical location, and the exit code in the invocation.
import { createHash } from 'node:crypto';
import { docsUrl, explanationMarkdown, explanationOf } from '../rules/explain.ts';
import { RULES } from '../rules/index.ts';
import type { Severity } from '../rules/types.ts';
import { PROBES, DISCOVER, INITIALIZE } from './probes.ts';
import { redactedReport, summaryLine, type CheckReport } from './report.ts';

export const SARIF_SCHEMA = 'https://json.schemastore.org/sarif-2.1.0.json';

const LEVEL: Readonly<Record<Severity, 'error' | 'warning' | 'note'>> = { error: 'error', warning: 'warning', info: 'note' };
const CATALOGUE = new Map(RULES.map((r) => [r.id, r]));
const PROBE_DEFS = new Map([DISCOVER, INITIALIZE, ...PROBES].map((p) => [p.id, p]));

function descriptor(id: string): Record<string, unknown> {
  const rule = CATALOGUE.get(id);
  if (rule) {
    return {
      id,
      name: id,
      shortDescription: { text: rule.summary },
      helpUri: docsUrl(id),
      help: { text: explanationOf(id).fix, markdown: explanationMarkdown(rule) },
      defaultConfiguration: { level: LEVEL[rule.severity] },
      properties: { group: rule.group, party: rule.party, versions: [...rule.versions], spec: rule.source },
    };
  }
  const probe = PROBE_DEFS.get(id.replace(/^probe\//, ''));
  if (probe)
    return {
      id,
      name: id,
      shortDescription: { text: `Probe "${probe.title}": the answer meets the probe's expectation` },
      defaultConfiguration: { level: 'error' },
    };
  return {
    id,
    name: id,
    shortDescription: { text: REACH_DESCRIPTIONS[id] ?? 'The server could not be reached' },
    defaultConfiguration: { level: 'error' },
  };
}

const REACH_DESCRIPTIONS: Record<string, string> = {
  'reach/needs-credentials': 'The server asks for credentials',
  'reach/no-mcp-endpoint': 'The URL answers, but no MCP endpoint is there (check the path)',
};

const fingerprint = (...parts: string[]): string => createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 32);

export interface SarifOptions {
  /** The file every result is placed on (a path in the repository, for code scanning); default the server's URL. */
  artifact?: string;
}

export function renderSarif(report: CheckReport, opts: SarifOptions = {}): string {
  const r = redactedReport(report);
  // Code scanning places a result only on a file of the repository, named relative to its root.
  const artifactLocation =
    opts.artifact === undefined
      ? { uri: r.target }
      : { uri: opts.artifact.replace(/\\/g, '/').replace(/^\.\//, ''), uriBaseId: '%SRCROOT%' };
  const ids: string[] = [];
  const indexOf = (id: string): number => {
    const at = ids.indexOf(id);
    if (at >= 0) return at;
    ids.push(id);
    return ids.length - 1;
  };
  const location = (probe: string, version: string | undefined) => ({
    physicalLocation: { artifactLocation },
    logicalLocations: [{ name: probe, fullyQualifiedName: `${version ?? 'unknown'}/${probe}`, kind: 'resource' }],
  });
  const results: Array<Record<string, unknown>> = [];
  for (const p of r.probes) {
    for (const f of p.findings) {
      results.push({
        ruleId: f.rule,
        ruleIndex: indexOf(f.rule),
        level: LEVEL[f.severity],
        message: { text: `${p.probe}: ${f.message}. Fix: ${f.fix}` },
        locations: [location(p.probe, p.version)],
        partialFingerprints: { 'mcpWardenCheck/v1': fingerprint(r.target, p.probe, f.rule, f.pointer) },
        // With --baseline: what code scanning calls a result seen before (accepted) or new.
        ...(r.baseline ? { baselineState: f.accepted ? 'unchanged' : 'new' } : {}),
        properties: {
          probe: p.probe,
          version: p.version ?? null,
          verdict: p.verdict,
          pointer: f.pointer,
          evidence: f.evidence,
          fix: f.fix,
          ...(f.frameworkFix ? { frameworkFix: f.frameworkFix } : {}),
        },
      });
    }
  }
  if (r.reach.status !== 'ok') {
    const rule = `reach/${r.reach.status}`;
    const challenge = r.reach.challenge ? ` WWW-Authenticate: ${r.reach.challenge}` : '';
    results.push({
      ruleId: rule,
      ruleIndex: indexOf(rule),
      level: 'error',
      message: { text: `${summaryLine(r)}.${challenge}` },
      locations: [location('reach', undefined)],
    });
  }
  const log = {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: r.tool.name, version: r.tool.version, semanticVersion: r.tool.version, rules: ids.map(descriptor) } },
        invocations: [
          {
            executionSuccessful: r.reach.status === 'ok',
            exitCode: r.exitCode,
            startTimeUtc: r.startedAt,
            endTimeUtc: new Date(Date.parse(r.startedAt) + r.durationMs).toISOString(),
          },
        ],
        results,
        properties: {
          target: r.target,
          versionsSpoken: r.protocol.spoken,
          versionUsed: r.protocol.used ?? null,
          summary: { ...r.summary },
          summaryLine: summaryLine(r),
          ...(r.framework ? { framework: { ...r.framework } } : {}),
        },
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}
