// `mcp-warden demo`: the printout has one row per exchange with the outcome the proxy logged, and
// the demo leaves nothing running. Also: the broken server's correct parts work with the SDK client.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runDemo } from '../../src/demo/run.ts';
import { startBrokenServer } from '../../src/demo/broken-server.ts';
import { connectSdkClient } from '../helpers/sdk-client.ts';
import { cliArgs } from '../helpers/bundle.ts';

/** `node ...CLI <command>` runs src/cli.ts (a bundle of it: test/helpers/bundle.ts). */
const CLI = await cliArgs();

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the ANSI colour codes this looks for
const ANSI = /\x1b\[/;

async function demo(color: boolean): Promise<{ code: number; text: string }> {
  let text = '';
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString('utf8');
      done();
    },
  });
  const code = await runDemo(out, { color });
  return { code, text };
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// [method, tool, HTTP status, outcome]
const EXPECTED: Array<[string, string, number, string]> = [
  ['initialize', '', 200, 'result'],
  ['tools/list', '', 200, 'result'],
  ['tools/call', 'get_weather', 200, 'result'],
  ['tools/call', 'divide', 200, 'isError'],
  ['tools/call', 'delete_everything', 200, 'isError'],
  ['tools/call', 'export_report', 500, 'invalid-response'],
  ['tools/call', 'lookup_user', 200, 'error:-32603'],
  ['tools/call', 'send_email', 200, 'result'],
  ['tools/call', 'slow_report', 200, 'result'],
  ['resources/list', '', 200, 'error:-32000'],
  ['DELETE', '', 200, 'session end'],
];

// [rule, where] the findings section must show
const EXPECTED_FINDINGS: Array<[string, string]> = [
  ['unknown-tool-as-iserror', 'tools/call delete_everything'],
  ['html-body', 'tools/call export_report'],
  ['leaked-stack-trace', 'tools/call lookup_user'],
  ['silent-success', 'tools/call send_email'],
  ['unknown-method-wrong-code', 'resources/list'],
];

describe('runDemo', () => {
  it('prints the session under audit.yaml (findings) and enforce.yaml (rewrites), without colour, and returns 0', async () => {
    const { code, text } = await demo(false);
    assert.equal(code, 0, text);
    assert.doesNotMatch(text, ANSI);
    const audit = text.slice(text.indexOf('Under config/audit.yaml'), text.indexOf('Under config/enforce.yaml'));
    const enforce = text.slice(text.indexOf('Under config/enforce.yaml'));
    assert.ok(audit.length > 0 && enforce.length > 0, text);
    // Under audit.yaml the client gets what the server sent: one row per exchange with its outcome.
    const lines = audit.split('\n');
    for (const [method, tool, status, outcome] of EXPECTED) {
      const row = new RegExp(
        `^\\s+${escapeRegExp(method)}\\s+${tool ? `${escapeRegExp(tool)}\\s+` : ''}${status}\\s+${escapeRegExp(outcome)}(\\s|$)`,
      );
      assert.equal(lines.filter((l) => row.test(l)).length, 1, `one row ${row} in:\n${audit}`);
    }
    assert.match(audit, /HTML page \(text\/html, \d+ bytes\)/);
    assert.match(audit, /SSE: 1 notification, then result "Report ready/);
    // Each deliberate fault shows up under its rule in the findings section.
    const findings = audit.slice(audit.indexOf('FINDINGS:'));
    for (const [rule, where] of EXPECTED_FINDINGS) {
      assert.match(
        findings,
        new RegExp(`\\b${escapeRegExp(rule)}\\b[^\\n]*\\n(\\s+[^\\n]*\\n)*?\\s+${escapeRegExp(where)}:`),
        `${rule} for ${where}`,
      );
    }
    // Under enforce.yaml the client gets what the spec asks for.
    assert.match(enforce, /delete_everything\s+200\s+isError\s+[\d.]+ ms\s+1\s+JSON error -32602 "Unknown tool: delete_everything"/);
    // The page also names an internal host (leaked-internal-host): two findings, one answer.
    assert.match(enforce, /export_report\s+200\s+invalid-response\s+[\d.]+ ms\s+2\s+JSON error -32603/);
    assert.match(enforce, /send_email\s+200\s+result\s+[\d.]+ ms\s+1\s+JSON result isError "Error: SMTP/);
    assert.match(enforce, /resources\/list\s+200\s+error:-32000\s+[\d.]+ ms\s+2\s+JSON error -32601/);
    assert.match(enforce, /REWRITES: 5/);
    assert.doesNotMatch(enforce, /HTML page \(text\/html/, 'the client never sees the HTML page');
    // One exchange over the legacy HTTP+SSE transport and one over stdio, put right under enforce.yaml.
    const others = text.slice(text.indexOf('Other transports'));
    assert.match(
      others,
      /legacy HTTP\+SSE\s+tools\/call forecast: isError\s+unknown-tool-as-iserror\s+error -32602 "Unknown tool: forecast"/,
    );
    assert.match(others, /stdio\s+tools\/call forecast: isError\s+unknown-tool-as-iserror\s+error -32602 "Unknown tool: forecast"/);
    assert.match(others, /stdout line Weather server ready\s+stdio-not-a-message\s+nothing \(not relayed\)/);
    assert.match(text, /mcp-warden rules/);
  });

  it('colours the output when asked', async () => {
    const { code, text } = await demo(true);
    assert.equal(code, 0, text);
    assert.match(text, ANSI);
  });

  it('exits by itself when run as `mcp-warden demo` (no dangling handles)', async () => {
    const { code, signal, stdout, stderr } = await new Promise<{
      code: number | null;
      signal: string | null;
      stdout: string;
      stderr: string;
    }>((resolve) => {
      const child = execFile(process.execPath, [...CLI, 'demo'], { cwd: ROOT, timeout: 15_000 }, (_err, stdout, stderr) =>
        resolve({ code: child.exitCode, signal: child.signalCode, stdout, stderr }),
      );
    });
    assert.equal(signal, null, `killed after the timeout; stderr:\n${stderr}`);
    assert.equal(code, 0, stdout + stderr);
    assert.match(stdout, /slow_report/);
    assert.doesNotMatch(stdout, ANSI); // stdout is a pipe, not a TTY
  });
});

describe('broken server, its correct parts', () => {
  it('serves the SDK client: initialize, tools/list, a result, an isError, progress over SSE', async () => {
    const server = await startBrokenServer();
    const handle = await connectSdkClient(server.url, { capabilities: {} });
    try {
      const { tools } = await handle.client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), [
        'divide',
        'export_report',
        'get_weather',
        'lookup_user',
        'send_email',
        'slow_report',
      ]);
      assert.deepEqual(await handle.client.callTool({ name: 'get_weather', arguments: { city: 'Oslo' } }), {
        content: [{ type: 'text', text: 'Sunny, 21 °C in Oslo' }],
      });
      const divide = await handle.client.callTool({ name: 'divide', arguments: { a: 1, b: 0 } });
      assert.equal(divide.isError, true);
      let progress = 0;
      await handle.client.callTool({ name: 'slow_report', arguments: {} }, undefined, { onprogress: () => void progress++ });
      assert.equal(progress, 1);
      await handle.transport.terminateSession();
    } finally {
      await handle.close();
      await server.close();
    }
  });
});
