// The report as one self-contained HTML page: tables rendered here (readable without scripts), the
// chart drawn in the page by the inlined uPlot from the data embedded as JSON. A Content-Security-
// Policy lets only the page's own scripts run and nothing load: it works offline and leaks nothing.
import { createHash } from 'node:crypto';
import { chartAssets } from './assets.ts';
import { SEVERITIES, type CountRow, type ReportData } from './model.ts';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = (v: unknown): string => String(v ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]!);
const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
const pct = (share: number): string => `${(share * 100).toFixed(1)}%`;
const n = (v: number): string => v.toLocaleString('en-US');

/** A number cell the browser test reads back: `data-k` names what it shows. */
const num = (key: string, v: number, shown = n(v)): string => `<td class="n" data-k="${esc(key)}">${esc(shown)}</td>`;
const cell = (v: unknown, cls = ''): string => `<td${cls ? ` class="${cls}"` : ''}>${esc(v)}</td>`;
const sev = (s: string): string => `<span class="sev sev-${esc(s)}">${esc(s)}</span>`;

function table(id: string, head: string[], rows: string[], empty: string): string {
  if (rows.length === 0) return `<p class="empty" id="${id}">${esc(empty)}</p>`;
  return `<table id="${id}"><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

const card = (key: string, label: string, value: number, extra = ''): string =>
  `<div class="card"><div class="v" data-k="${key}">${n(value)}</div><div class="l">${esc(label)}${extra}</div></div>`;

/** Why exchanges went unjudged, as a card's footnote: ` (too-large 3, scoped-out 1)`. */
function unjudgedNote(unjudged: Record<string, number>): string {
  const parts = Object.entries(unjudged).map(([reason, count]) => `${esc(reason)} ${n(count)}`);
  return parts.length === 0 ? '' : ` <span data-k="summary.coverage.unjudged">(not judged: ${parts.join(', ')})</span>`;
}

function summary(d: ReportData): string {
  const s = d.summary;
  const share = s.exchanges === 0 ? 0 : s.errors / s.exchanges;
  return `<section class="cards">
${card('summary.exchanges', 'exchanges', s.exchanges)}
${card('summary.flagged', 'with findings', s.flagged)}
${card('summary.errors', 'failed', s.errors, ` (<span data-k="summary.errorShare">${pct(share)}</span>)`)}
${SEVERITIES.map((k) => card(`summary.findings.${k}`, `${k} findings`, s.findings[k])).join('\n')}
${card('summary.verdicts.rewrite', 'rewritten', s.verdicts.rewrite)}
${card('summary.verdicts.block', 'blocked', s.verdicts.block)}
${card('summary.coverage.judged', `judged of ${s.coverage.of}`, s.coverage.judged, unjudgedNote(s.coverage.unjudged))}
</section>`;
}

function methods(d: ReportData): string {
  const rows = d.methods.map(
    (m) =>
      `<tr>${cell(m.key, 'k')}${num(`methods.${m.key}.exchanges`, m.exchanges)}${num(`methods.${m.key}.errors`, m.errors)}${num(`methods.${m.key}.errorShare`, m.errorShare, pct(m.errorShare))}${num(`methods.${m.key}.findings`, m.findings)}</tr>`,
  );
  return table('methods', ['method', 'exchanges', 'failed', 'error share', 'findings'], rows, 'No exchanges.');
}

/** A rule's name linking its explanation (docs/rules.md#<rule-id>), when it has one. */
const ruleLink = (rule: string, docs: string | null): string =>
  docs ? `<a href="${esc(docs)}" rel="noreferrer">${esc(rule)}</a>` : esc(rule);

function rules(d: ReportData): string {
  const rows = d.rules.map((r) => {
    const actions = Object.entries(r.actions)
      .map(([a, c]) => `${a} ${c}`)
      .join(', ');
    const examples = r.examples
      .map(
        (e) =>
          `<li><span class="muted">${esc(e.time ?? '')} ${esc(e.method ?? '')}${e.tool ? ` ${esc(e.tool)}` : ''}</span><br>${esc(e.message)}${e.evidence ? `<br><code>${esc(e.evidence)}</code>` : ''}</li>`,
      )
      .join('');
    return `<tr><td class="k">${ruleLink(r.rule, r.docs)}</td><td>${sev(r.severity)}</td>${num(`rules.${r.rule}.count`, r.count)}${cell(actions)}<td>${[r.fix ?? '', ...r.frameworkFixes].map(esc).join('<br>')}</td><td><details><summary>${r.examples.length} example${r.examples.length === 1 ? '' : 's'}</summary><ul>${examples}</ul></details></td></tr>`;
  });
  return table('rules', ['rule', 'severity', 'findings', 'actions', 'fix', 'examples (redacted)'], rows, 'No findings.');
}

/** Rows of a count table: key, exchanges, failed, findings, the extra cells, then the first finding (masked). */
function countRows<R extends CountRow>(id: string, list: readonly R[], extra?: (row: R) => string[]): string[] {
  return list.map(
    (r) =>
      `<tr>${cell(r.key, 'k')}${num(`${id}.${r.key}.exchanges`, r.exchanges)}${num(`${id}.${r.key}.errors`, r.errors)}${num(`${id}.${r.key}.findings`, r.findings)}${(extra?.(r) ?? []).join('')}${cell(r.example ?? '', 'muted')}</tr>`,
  );
}

const EXAMPLE = 'first finding (redacted)';

function tools(d: ReportData): string {
  const rows = countRows('tools', d.tools, (t) => [num(`tools.${t.key}.rewritten`, t.rewritten), num(`tools.${t.key}.blocked`, t.blocked)]);
  return table('tools', ['tool', 'calls', 'failed', 'findings', 'rewritten', 'blocked', EXAMPLE], rows, 'No tool calls.');
}

function sessions(d: ReportData): string {
  const rows = countRows('sessions', d.sessions, (s) => [
    cell(s.client ?? ''),
    cell(s.protocolVersion ?? ''),
    cell(`${s.first ?? ''} – ${s.last ?? ''}`, 'muted'),
  ]);
  return table(
    'sessions',
    ['session', 'exchanges', 'failed', 'findings', 'client', 'version', 'seen', EXAMPLE],
    rows,
    'No sessions (stateless servers and stdio have none).',
  );
}

function worst(d: ReportData): string {
  const rows = d.worst.map(
    (x) =>
      `<tr>${cell(x.time ?? '', 'muted')}${cell(`${x.method}${x.tool ? ` ${x.tool}` : ''}`, 'k')}${cell(x.outcome)}${cell(x.status ?? '')}${cell(x.client ?? '')}${cell(x.session ?? '', 'muted')}<td>${x.findings.map((f) => `${sev(f.severity)} <b>${ruleLink(f.rule, f.docs)}</b>: ${esc(f.message)}`).join('<br>')}</td></tr>`,
  );
  return table(
    'worst',
    ['time', 'exchange', 'outcome', 'status', 'client', 'session', 'findings'],
    rows,
    'Nothing failed and nothing was found.',
  );
}

function whatIf(d: ReportData): string {
  const w = d.whatIf;
  if (w.source === 'none')
    return `<p class="empty" id="what-if">No capture among the inputs and no shadow decisions in the log: nothing to say what a policy would change. Keep a capture (<code>capture: { path }</code> in the policy) or run the proxy under audit with <code>--shadow</code>.</p>`;
  const from =
    w.source === 'replay'
      ? `Replayed from the capture under <code>${esc(w.policy)}</code>, judged as enforce mode (as <code>mcp-warden replay</code> does).`
      : w.source === 'shadow'
        ? `From the shadow decisions the proxy made under audit (the <code>--shadow</code> policy${w.policy ? ` <code>${esc(w.policy)}</code>` : ' it ran with'}).`
        : 'The policy in force was enforce: what it changed.';
  const rows = w.byRule.map(
    (r) =>
      `<tr>${cell(r.rule, 'k')}${(['rewrite', 'block', 'log'] as const).map((a) => num(`whatIf.${r.rule}.${a}`, r.actions[a] ?? 0)).join('')}</tr>`,
  );
  const examples = w.examples.map(
    (e) =>
      `<tr>${cell(e.time ?? '', 'muted')}${cell(`${e.method}${e.tool ? ` ${e.tool}` : ''}`, 'k')}${cell(e.kind)}${cell(e.rules.join(', '))}<td>${e.before ? `<code>${esc(e.before)}</code><br>→ ` : ''}${e.after ? `<code>${esc(e.after)}</code>` : ''}</td></tr>`,
  );
  return `<div id="what-if"><p>${from}</p>
<section class="cards">${card('whatIf.exchanges', 'exchanges judged', w.exchanges)}${card('whatIf.rewrite', w.source === 'enforced' ? 'rewritten' : 'would be rewritten', w.decisions.rewrite)}${card('whatIf.block', w.source === 'enforced' ? 'blocked' : 'would be blocked', w.decisions.block)}${card('whatIf.pass', w.source === 'enforced' ? 'passed as they came' : 'would pass as they came', w.decisions.pass)}</section>
${table('what-if-rules', ['rule', 'rewrite', 'block', 'log'], rows, 'No findings.')}
${examples.length > 0 ? `<h3>First changes</h3>${table('what-if-examples', ['time', 'exchange', 'would', 'rules', 'what the client would receive'], examples, '')}` : ''}</div>`;
}

const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:16px 28px}header h1{margin:0;font-size:20px}header p{margin:4px 0 0;color:#b8c0d0}
main{padding:8px 28px 40px;max-width:1400px}h2{margin:28px 0 8px;font-size:17px}
.cards{display:flex;flex-wrap:wrap;gap:10px}.card{background:#fff;border:1px solid #dde1e8;border-radius:6px;padding:10px 14px;min-width:110px}
.card .v{font-size:22px;font-weight:600}.card .l{color:#5b6475}
table{border-collapse:collapse;background:#fff;border:1px solid #dde1e8;width:100%}th,td{padding:5px 9px;border-bottom:1px solid #eceff3;text-align:left;vertical-align:top}
th{background:#eef1f5;font-weight:600}td.n{text-align:right;font-variant-numeric:tabular-nums}td.k{font-family:ui-monospace,monospace;word-break:break-all}
.muted{color:#6b7385}code{font-family:ui-monospace,monospace;font-size:12px;word-break:break-all}
.sev{display:inline-block;border-radius:3px;padding:0 5px;font-size:12px;color:#fff}.sev-error{background:#c62828}.sev-warning{background:#d98200}.sev-info{background:#4a6fa5}
#chart{background:#fff;border:1px solid #dde1e8;padding:8px;min-height:60px}.empty{color:#6b7385}footer{color:#6b7385;margin-top:30px}
`;

/** Draws the timeline: exchanges on the right axis, findings by severity on the left. */
const CHART = `(() => {
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const t = data.timeline, el = document.getElementById('chart');
  if (t.exchanges.length === 0) { el.textContent = 'No timed records.'; return; }
  const xs = t.exchanges.map((_, i) => (t.start + i * t.bucketMs) / 1000);
  const step = uPlot.paths.stepped({ align: 1 });
  const span = (ms) => ms < 1000 ? ms + ' ms' : ms < 60000 ? ms / 1000 + ' s' : ms < 3600000 ? ms / 60000 + ' min' : ms < 86400000 ? ms / 3600000 + ' h' : ms / 86400000 + ' d';
  const opts = {
    width: Math.max(320, el.clientWidth - 16), height: 260,
    scales: { x: { time: true }, n: { range: (u, min, max) => [0, Math.max(1, max)] }, f: { range: (u, min, max) => [0, Math.max(1, max)] } },
    series: [
      {},
      { label: 'exchanges', scale: 'n', stroke: '#9aa3b2', fill: 'rgba(154,163,178,0.15)', width: 1, paths: step, points: { show: false } },
      { label: 'error findings', scale: 'f', stroke: '#c62828', width: 2, paths: step, points: { show: false } },
      { label: 'warning findings', scale: 'f', stroke: '#d98200', width: 2, paths: step, points: { show: false } },
      { label: 'info findings', scale: 'f', stroke: '#4a6fa5', width: 2, paths: step, points: { show: false } },
    ],
    axes: [{}, { scale: 'f', label: 'findings per ' + span(t.bucketMs) }, { scale: 'n', side: 1, label: 'exchanges', grid: { show: false } }],
  };
  new uPlot(opts, [xs, t.exchanges, t.findings.error, t.findings.warning, t.findings.info], el);
  el.dataset.drawn = 'true';
})();`;

export function renderReportHtml(d: ReportData, title = 'mcp-warden report'): string {
  const { script, style } = chartAssets();
  const period = d.summary.first ? `${d.summary.first} – ${d.summary.last}` : 'no timed records';
  const dropped = Object.entries(d.dropped).filter(([, v]) => v > 0);
  const csp = `default-src 'none'; script-src ${sha256(script)} ${sha256(CHART)}; style-src 'unsafe-inline'; img-src data:`;
  const json = JSON.stringify(d).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${esc(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>${style}</style><style>${STYLE}</style>
</head><body>
<header><h1>${esc(title)}</h1><p>${esc(period)} · generated ${esc(d.generatedAt)} · ${esc(d.input.sources.join(', ') || 'live process')}</p></header>
<main>
${summary(d)}
<h2>Findings over time</h2><div id="chart"></div>
<h2>Error share per method</h2>${methods(d)}
<h2>Findings by rule</h2>${rules(d)}
<h2>What the policy would change</h2>${whatIf(d)}
<h2>Worst exchanges</h2>${worst(d)}
<h2>Tools</h2>${tools(d)}
<h2>Clients</h2>${table('clients', ['client', 'exchanges', 'failed', 'findings', EXAMPLE], countRows('clients', d.clients), 'No exchanges.')}
<h2>Sessions</h2>${sessions(d)}
<h2>Protocol versions</h2>${table(
    'versions',
    ['version', 'exchanges'],
    d.versions.map((v) => `<tr>${cell(v.version, 'k')}${num(`versions.${v.version}`, v.exchanges)}</tr>`),
    'No exchanges.',
  )}
<footer>
<p>Read: <span data-k="input.lines">${n(d.input.lines)}</span> lines, ${n(d.input.records.exchange)} exchange records, ${n(d.input.records.violation)} violations, ${n(d.input.records.capture)} capture records, ${n(d.input.bad)} unreadable. Tables from: ${esc(d.input.tablesFrom)}.${d.input.window ? ` Window: ${esc(d.input.window.from)} – ${esc(d.input.window.to)} (at most ${n(d.input.window.maxExchanges)} exchanges).` : ''}
${dropped.length > 0 ? `<br>Tables that were full dropped their lightest keys (their counts are lower bounds): ${esc(dropped.map(([k, v]) => `${k} ${v}`).join(', '))}.` : ''}
Secrets are masked by name and by shape in everything shown.</p>
<p>mcp-warden · failed = an <code>isError</code> result, a JSON-RPC error, no response or one that could not be read.</p>
</footer>
</main>
<script type="application/json" id="report-data">${json}</script>
<script>${script}</script>
<script>${CHART}</script>
</body></html>
`;
}
