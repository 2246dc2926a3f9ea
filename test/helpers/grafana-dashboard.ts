// deploy/grafana/mcp-warden.json, read for its tests: each panel's queries, and the metrics they name.
import { readFileSync } from 'node:fs';
import { metricsIn } from './alert-rules.ts';

export const DASHBOARD_FILE = new URL('../../deploy/grafana/mcp-warden.json', import.meta.url);

interface Panel {
  type: string;
  title: string;
  id: number;
  targets?: Array<{ expr: string }>;
}

export interface DashboardQuery {
  panel: string;
  expr: string;
}

/** Every query of every panel (rows hold none). */
export function dashboardQueries(): DashboardQuery[] {
  const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as { panels: Panel[] };
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
}

/** The metric a series name belongs to: a histogram's _bucket, _sum and _count are its own. */
export const metricOf = (series: string): string => series.replace(/_(bucket|sum|count)$/, '');

/** The metrics a query names. */
export const queryMetrics = (expr: string): string[] => metricsIn(expr).map(metricOf);

/** A query as Prometheus itself can run it: Grafana's variables given values. */
export const asPromQl = (expr: string): string => expr.replaceAll('$__rate_interval', '1m');
