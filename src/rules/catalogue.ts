// The rule catalogue as people read it: `mcp-warden rules` and the README's table.
import type { Rule, Wire } from './types.ts';
import { ALL } from './versions.ts';
import { ALL_WIRES } from './wires.ts';

/** A compact form of a version list: "all", "2025-11-25+", "≤2025-06-18", or the list. */
export function describeVersions(versions: readonly string[]): string {
  const idx = versions.map((v) => ALL.indexOf(v)).sort((a, b) => a - b);
  const contiguous = idx.every((n, i) => i === 0 || n === idx[i - 1]! + 1);
  if (idx.length === ALL.length) return 'all';
  if (contiguous && idx.length > 1 && idx.at(-1) === ALL.length - 1) return `${ALL[idx[0]!]}+`;
  if (contiguous && idx.length > 1 && idx[0] === 0) return `≤${ALL[idx.at(-1)!]}`;
  return idx.map((i) => ALL[i]).join(', ');
}

/**
 * A short label for a spec URL: the page and its anchor ("streamable-http#server-validation"),
 * with the version when it is not the newest; "JSON-RPC#error_object"; "RFC 9110 §15.5.5".
 */
export function specLabel(url: URL): string {
  const anchor = url.hash.slice(1);
  if (url.hostname === 'modelcontextprotocol.io') {
    const [, version = '', ...path] = url.pathname.split('/').filter(Boolean);
    if (path.at(-1) === 'index') path.pop();
    const page = path.at(-1) ?? version;
    return `${page}${anchor ? `#${anchor}` : ''}${version !== ALL.at(-1) ? ` (${version})` : ''}`;
  }
  if (url.hostname.endsWith('jsonrpc.org')) return `JSON-RPC${anchor ? `#${anchor}` : ''}`;
  const rfc = /^\/rfc\/rfc(\d+)/.exec(url.pathname);
  if (rfc) return `RFC ${rfc[1]}${anchor.startsWith('section-') ? ` §${anchor.slice('section-'.length)}` : ''}`;
  return `${url.hostname}${url.pathname}${url.hash}`;
}

/** A rule's source for the README: each URL of the comma-joined list as a markdown link with a short label, other text as it is. */
export function sourceMarkdown(source: string): string {
  return source
    .split(', ')
    .map((part) => (/^https:\/\/\S+$/.test(part) ? `[${specLabel(new URL(part))}](${part})` : part))
    .join(', ');
}

const WIRE_NAMES: Readonly<Record<Wire, string>> = { 'streamable-http': 'Streamable HTTP', sse: 'legacy SSE', stdio: 'stdio' };

/** The transports a rule judges, for people: `all`, or their names. */
export const describeTransports = (r: Rule): string => (r.transports ? r.transports.map((w) => WIRE_NAMES[w]).join(', ') : 'all');

export function rulesMarkdown(rules: readonly Rule[]): string {
  const rows = rules.map(
    (r) =>
      `| \`${r.id}\` | ${r.severity} | ${describeVersions(r.versions)} | ${describeTransports(r)} | ${r.group} | ${r.party} | ${r.summary} | ${sourceMarkdown(r.source)} |`,
  );
  return [
    '| rule | severity | versions | transports | group | party | what it flags | spec |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

export function rulesText(rules: readonly Rule[]): string {
  const cols = (r: Rule) => [r.id, r.severity, describeVersions(r.versions), r.group, r.summary];
  const table = [['RULE', 'SEVERITY', 'VERSIONS', 'GROUP', 'WHAT IT FLAGS'], ...rules.map(cols)];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  return table.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n');
}

export function rulesJson(rules: readonly Rule[]): string {
  return JSON.stringify(
    rules.map(({ id, group, severity, versions, transports, party, summary, source }) => ({
      id,
      group,
      severity,
      versions,
      transports: transports ?? ALL_WIRES,
      party,
      summary,
      source,
    })),
    null,
    2,
  );
}
