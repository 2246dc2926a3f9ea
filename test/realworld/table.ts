// The README's "Real servers through the proxy" table, generated from the corpus (servers.ts) and
// its verdicts (verdicts.ts): realworld-corpus.test.ts keeps the README's copy equal to it.
import { SERVERS } from './servers.ts';
import { VERDICTS } from './verdicts.ts';

const TRANSPORT = {
  stdio: 'stdio',
  sse: 'legacy HTTP+SSE',
  'streamable-http': 'Streamable HTTP, sessions',
  'stateless-http': 'Streamable HTTP, stateless',
};

export function corpusMarkdown(): string {
  const lines = [
    '| server | package | built on | transport | findings under audit (verdict) | enforce changed (verdict) |',
    '|---|---|---|---|---|---|',
  ];
  for (const s of SERVERS) {
    const v = VERDICTS[s.name] ?? { findings: {}, changes: {} };
    const findings = Object.entries(v.findings).map(([key, f]) => `${key.split(' | ')[1]} on ${key.split(' | ')[0]} (${f.verdict})`);
    const changes = Object.entries(v.changes).map(([step, c]) => `${step} (${c.verdict})`);
    lines.push(
      `| ${s.name} | \`${s.package}\` | ${s.builtOn} | ${TRANSPORT[s.transport]} | ${findings.join('; ') || 'none'} | ${changes.join('; ') || 'none'} |`,
    );
  }
  return lines.join('\n');
}
