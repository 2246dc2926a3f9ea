// The metrics docs/operations.md documents, read from its metrics table: name -> type. Alerts, the
// dashboard and the scrape test are checked against this one list.
import { readFileSync } from 'node:fs';

const OPERATIONS = new URL('../../docs/operations.md', import.meta.url);

/** Documented metrics a proxy registers only with `--state redis://` (the state store's own). */
export const NEEDS_REDIS: ReadonlySet<string> = new Set(['mcp_warden_state_connected']);

function documentedMetrics(): Map<string, string> {
  const text = readFileSync(OPERATIONS, 'utf8');
  const section = text.slice(text.indexOf('\n## Metrics\n'), text.indexOf('\n## ', text.indexOf('\n## Metrics\n') + 1));
  const metrics = new Map<string, string>();
  for (const m of section.matchAll(/^\| `(mcp_warden_[a-z_]+)` \| (counter|gauge|histogram|summary) \|/gm)) metrics.set(m[1]!, m[2]!);
  return metrics;
}

/** Every `mcp_warden_*` metric of the table, with its Prometheus type. */
export const DOCUMENTED_METRICS: ReadonlyMap<string, string> = documentedMetrics();
