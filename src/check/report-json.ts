// The report as JSON, for scripts: the CheckReport as it is (report.ts documents every field).
import type { CheckReport } from './report.ts';

export function renderJson(r: CheckReport): string {
  return `${JSON.stringify(r, null, 2)}\n`;
}
