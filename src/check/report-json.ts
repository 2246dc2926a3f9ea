// The report as JSON, for scripts: the CheckReport as it is (report.ts documents every field).
import { redactedReport, type CheckReport } from './report.ts';

export function renderJson(r: CheckReport): string {
  return `${JSON.stringify(redactedReport(r), null, 2)}\n`;
}
