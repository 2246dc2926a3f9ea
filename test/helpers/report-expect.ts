// What a report must show, computed from the log's lines directly (not with src/report): the
// tests compare the page and report.json with it.
import { readFileSync } from 'node:fs';

export interface Expected {
  exchanges: number;
  failed: number;
  flagged: number;
  findings: { error: number; warning: number; info: number };
  methods: Map<string, { exchanges: number; errors: number }>;
  rules: Map<string, number>;
  tools: Map<string, number>;
}

const failed = (outcome: string): boolean =>
  outcome === 'isError' || outcome.startsWith('error:') || outcome === 'no-response' || outcome === 'invalid-response';

export function expectedFromLog(path: string): Expected {
  const records = readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const e: Expected = {
    exchanges: 0,
    failed: 0,
    flagged: 0,
    findings: { error: 0, warning: 0, info: 0 },
    methods: new Map(),
    rules: new Map(),
    tools: new Map(),
  };
  for (const r of records) {
    if (r.msg === 'violation') {
      e.findings[r.severity as 'error']++;
      e.rules.set(String(r.rule), (e.rules.get(String(r.rule)) ?? 0) + 1);
    }
    if (r.msg !== 'exchange') continue;
    e.exchanges++;
    const bad = failed(String(r.outcome));
    if (bad) e.failed++;
    if (typeof r.violations === 'number' && r.violations > 0) e.flagged++;
    const m = e.methods.get(String(r.method)) ?? { exchanges: 0, errors: 0 };
    m.exchanges++;
    if (bad) m.errors++;
    e.methods.set(String(r.method), m);
    if (typeof r.tool === 'string') e.tools.set(r.tool, (e.tools.get(r.tool) ?? 0) + 1);
  }
  return e;
}
