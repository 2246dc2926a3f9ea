// One explanation, every view (#46): the official SDK server (1.32 McpServer) answers an unknown
// tool with isError; through the proxy that is an unknown-tool-as-iserror finding, and --pretty,
// report.json, the HTML report, and check's text, Markdown and SARIF each show its fix and the
// same docs link, all taken from the rule's explanation. `mcp-warden explain RULE` prints it. The
// proxy and check recognise the SDK from that answer (the session's `server` record) and show the
// rule's fix for McpServer: the SDK does it, the version that fixed it, the policy meanwhile.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { renderMarkdown } from '../../src/check/report-markdown.ts';
import { renderSarif } from '../../src/check/report-sarif.ts';
import { renderTable } from '../../src/check/report-table.ts';
import { defaultPolicy } from '../../src/config/compile.ts';
import { renderReportHtml } from '../../src/report/html.ts';
import { ReportReader } from '../../src/report/reader.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { docsUrl, explanationMarkdown, explanationText, frameworkFixLine, ruleFix } from '../../src/rules/explain.ts';
import { RULES } from '../../src/rules/index.ts';
import { prettyLine } from '../../src/sinks/pretty.ts';
import { startEverythingServer } from '../fixtures/everything-server.ts';
import { startSdkServer, type SdkServer } from '../fixtures/sdk-server.ts';
import { cliArgs } from '../helpers/bundle.ts';
import { check } from '../helpers/check.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';
import { connectSdkClient } from '../helpers/sdk-client.ts';

const RULE = 'unknown-tool-as-iserror';
const rule = RULES.find((r) => r.id === RULE)!;
const DOCS = docsUrl(RULE);

let server: SdkServer;
let proxy: TestProxy;
before(async () => {
  server = await startSdkServer({ mode: 'json' });
  proxy = await startProxy(server.url);
});
after(async () => {
  await proxy.close();
  await server.close();
});

test('the proxy log, --pretty, report.json and the HTML report carry the fix and the docs link of a finding on the SDK server', async () => {
  const client = await connectSdkClient(proxy.url);
  try {
    const answer = await client.client.callTool({ name: 'no_such_tool', arguments: {} });
    assert.equal(answer.isError, true, 'SDK 1.32 McpServer answers an unknown tool with an isError result');
  } finally {
    await client.close();
  }
  const violation = await proxy.log.waitFor((r) => r.msg === 'violation' && r.rule === RULE);
  await proxy.log.waitFor((r) => r.msg === 'exchange' && r.tool === 'no_such_tool');

  // The session's server record: the SDK told by its answer to the unknown tool, once.
  const servers = proxy.log.records.filter((r) => r.msg === 'server');
  assert.equal(servers.length, 1, 'one server record for the session');
  assert.deepEqual(
    { name: servers[0]!.name, version: servers[0]!.version, framework: servers[0]!.framework, confidence: servers[0]!.confidence },
    { name: 'warden-fixture', version: '1.0.0', framework: 'typescript-sdk-v1-mcpserver', confidence: 'high' },
  );
  assert.equal(servers[0]!.session, violation.session);
  // The violation carries the fix in McpServer's terms: the SDK does it, v2 fixed it, the policy meanwhile.
  assert.equal(violation.frameworkFix, frameworkFixLine(RULE, 'typescript-sdk-v1-mcpserver'));
  assert.match(String(violation.frameworkFix), /^TypeScript SDK v1, McpServer: McpServer does it, not your code/);
  assert.match(String(violation.frameworkFix), /Fixed in @modelcontextprotocol\/server 2\.0\.0/);
  assert.match(String(violation.frameworkFix), /unknown-tool: rewrite under mode: enforce/);

  // --pretty: a second, indented line with the finding's fix and the rule's docs link, a third with McpServer's.
  const [, second, third] = prettyLine(violation, false).split('\n');
  assert.equal(second?.trim(), `fix: ${String(violation.fix)}  ${DOCS}`);
  assert.equal(third?.trim(), violation.frameworkFix);

  // report.json: the rule's row has the explanation's fix and the docs link; the worst exchanges link it too.
  const reader = new ReportReader(defaultPolicy(REWRITABLE));
  for (const r of proxy.log.records) reader.line(JSON.stringify(r));
  const data = reader.data(['log']);
  const row = data.rules.find((r) => r.rule === RULE);
  assert.ok(row, 'the report has the rule');
  assert.equal(row.fix, ruleFix(RULE));
  assert.equal(row.docs, DOCS);
  assert.deepEqual(row.frameworkFixes, [violation.frameworkFix], "and McpServer's fix, as the log carried it");
  const worst = data.worst.flatMap((x) => x.findings).find((f) => f.rule === RULE);
  assert.equal(worst?.docs, DOCS);

  // The HTML report: the rule's name links its section, and the fix is in its row.
  const html = renderReportHtml(data);
  assert.ok(html.includes(`<a href="${DOCS}" rel="noreferrer">${RULE}</a>`), 'the rule links its explanation');
  assert.ok(html.includes(escapeHtml(ruleFix(RULE)!)), "the rule's fix is on the page");
  assert.ok(html.includes(escapeHtml(String(violation.frameworkFix))), "McpServer's fix is on the page");
});

test("check's text, Markdown and SARIF show the same fix and docs link for the SDK server's finding", async () => {
  const report = await check(server.url);
  assert.equal(report.framework?.framework, 'typescript-sdk-v1-mcpserver', 'check recognises McpServer');
  const finding = report.probes.flatMap((p) => p.findings).find((f) => f.rule === RULE);
  assert.ok(finding, `check finds ${RULE} on the SDK server`);
  const mcpServerFix = frameworkFixLine(RULE, 'typescript-sdk-v1-mcpserver')!;
  assert.equal(finding.frameworkFix, mcpServerFix);
  const text = renderTable(report, { color: false });
  assert.ok(text.includes('  built on  TypeScript SDK v1, McpServer (high: '), 'the header names the framework');
  assert.ok(text.includes(`fix: ${finding.fix}\n          fix for ${mcpServerFix.slice(0, 40)}`), "the finding's fix, then McpServer's");
  assert.ok(text.includes(`\n          docs: ${DOCS}\n`));
  const md = renderMarkdown(report);
  assert.ok(md.includes(`([${RULE}](${DOCS}))`));
  assert.ok(md.includes('  - fix for TypeScript SDK v1, McpServer: McpServer does it, not your code'));
  const sarif = JSON.parse(renderSarif(report)) as {
    runs: Array<{ tool: { driver: { rules: Array<{ id: string; helpUri: string; help: { text: string; markdown: string } }> } } }>;
  };
  const descriptor = sarif.runs[0]!.tool.driver.rules.find((d) => d.id === RULE)!;
  assert.equal(descriptor.helpUri, DOCS);
  assert.deepEqual(descriptor.help, { text: ruleFix(RULE), markdown: explanationMarkdown(rule) });
});

test('`mcp-warden explain RULE` prints the explanation; an unknown name exits 1 listing every rule', async () => {
  const cli = await cliArgs();
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const run = (...args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [...cli, ...args], { cwd: root, timeout: 30_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
      );
    });
  const explained = await run('explain', RULE);
  assert.equal(explained.code, 0, explained.stderr);
  assert.equal(explained.stdout, `${explanationText(rule)}\n`);
  const unknown = await run('rules', 'unknown-tool');
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /^unknown rule "unknown-tool"; the rules are:\n/);
  for (const r of RULES) assert.ok(unknown.stderr.includes(`\n  ${r.id}\n`) || unknown.stderr.endsWith(`\n  ${r.id}\n`), r.id);
});

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

test('server-everything (npm, on the TypeScript SDK 1.32) through the proxy: recognised as McpServer, its fix shown', async () => {
  const everything = await startEverythingServer();
  const front = await startProxy(everything.url);
  try {
    const client = await connectSdkClient(front.url, { capabilities: {} });
    try {
      await client.client.callTool({ name: 'no_such_tool', arguments: {} });
    } finally {
      await client.close();
    }
    const violation = await front.log.waitFor((r) => r.msg === 'violation' && r.rule === RULE);
    const server = front.log.records.find((r) => r.msg === 'server');
    assert.equal(server?.framework, 'typescript-sdk-v1-mcpserver');
    assert.equal(server?.name, 'mcp-servers/everything');
    assert.equal(violation.frameworkFix, frameworkFixLine(RULE, 'typescript-sdk-v1-mcpserver'));
  } finally {
    await front.close();
    await everything.close();
  }
});
