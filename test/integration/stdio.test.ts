// mcp-warden stdio: the real CLI between a client on its pipes and a child server. The reference
// server (server-everything, stdio) under the SDK's StdioClientTransport, audit and enforce; the
// fixture server for each fault (junk on stdout, death mid-call, a huge line, a pretty-printed
// message, a slow tool); and the process contract (exit code, signals, the log, a missing command).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { everythingServer, fixtureServer, initialize, startStdio, stdioArgs, toolCall, type StdioRun } from '../helpers/stdio.ts';

const ENFORCE = new URL('../../config/enforce.yaml', import.meta.url).pathname;
const runs: StdioRun[] = [];
after(async () => {
  await Promise.all(runs.map((r) => r.close()));
});
const start = async (...args: Parameters<typeof startStdio>): Promise<StdioRun> => {
  const run = await startStdio(...args);
  runs.push(run);
  return run;
};
const fixture = async (mode: string, flags: string[] = [], env: NodeJS.ProcessEnv = {}) =>
  start(await fixtureServer(), { flags, env: { FIXTURE_MODE: mode, ...env } });
const idIs = (id: number | string) => (m: Record<string, unknown>) => m.id === id;

/** The fixture server in `mode` run directly, without mcp-warden: what it writes to stdout for `lines`, and its exit code. */
async function directly(mode: string, lines: readonly unknown[]): Promise<{ stdout: string; code: number | null }> {
  const [command, ...args] = await fixtureServer();
  const child = spawn(command!, args, { stdio: ['pipe', 'pipe', 'ignore'], env: { ...process.env, FIXTURE_MODE: mode } });
  let stdout = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stdin!.on('error', () => {});
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  for (const line of lines) child.stdin!.write(`${JSON.stringify(line)}\n`);
  const code = await exited;
  return { stdout, code };
}

/** The SDK's client over StdioClientTransport, through mcp-warden stdio to server-everything. */
async function sdkThroughWarden(flags: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-warden-sdk-stdio-'));
  const logFile = join(dir, 'log.jsonl');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: await stdioArgs([process.execPath, await everythingServer(), 'stdio'], flags, logFile),
    stderr: 'pipe',
  });
  const errors: Error[] = [];
  const client = new Client({ name: 'stdio-sdk-test', version: '1.0.0' });
  client.onerror = (e) => errors.push(e);
  await client.connect(transport);
  return {
    client,
    errors,
    log: () =>
      readFileSync(logFile, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    async close() {
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('the SDK client and server-everything through mcp-warden stdio', () => {
  test('audit: tools listed and called as without the proxy, each exchange logged, stdout only JSON-RPC', async () => {
    const sdk = await sdkThroughWarden([]);
    try {
      const { tools } = await sdk.client.listTools();
      assert.ok(tools.some((t) => t.name === 'echo'));
      const res = await sdk.client.callTool({ name: 'echo', arguments: { message: 'through stdio' } });
      assert.deepEqual(res.content, [{ type: 'text', text: 'Echo: through stdio' }]);
      const unknown = await sdk.client.callTool({ name: 'no-such-tool', arguments: {} });
      assert.equal(unknown.isError, true, 'audit changes nothing');
      // mcp-warden exits with its child once the client closes: its log is then complete.
      await sdk.client.close();
      const exchanges = sdk.log().filter((r) => r.msg === 'exchange');
      const call = exchanges.find((r) => r.tool === 'echo');
      assert.equal(call?.transport, 'stdio');
      assert.equal(call?.outcome, 'result');
      assert.equal(call?.protocolVersion, exchanges.find((r) => r.method === 'initialize')?.protocolVersion);
      assert.ok(sdk.log().some((r) => r.rule === 'unknown-tool-as-iserror' && r.tool === 'no-such-tool'));
      assert.equal(sdk.log().filter((r) => r.tool === 'echo' && typeof r.rule === 'string').length, 0, 'a correct answer has no finding');
      assert.deepEqual(sdk.errors, [], 'the SDK read nothing it could not parse');
    } finally {
      await sdk.close();
    }
  });

  test('enforce: an unknown tool reaches the SDK client as McpError -32602', async () => {
    const sdk = await sdkThroughWarden(['--policy', ENFORCE]);
    try {
      await assert.rejects(
        sdk.client.callTool({ name: 'no-such-tool', arguments: {} }),
        (err: unknown) => err instanceof McpError && err.code === -32602 && /Unknown tool: no-such-tool/.test(err.message),
      );
      const ok = await sdk.client.callTool({ name: 'echo', arguments: { message: 'still fine' } });
      assert.deepEqual(ok.content, [{ type: 'text', text: 'Echo: still fine' }]);
    } finally {
      await sdk.close();
    }
  });
});

describe('a server that breaks stdio framing', () => {
  test('junk on stdout: flagged under audit and relayed; under enforce the client reads only JSON-RPC', async () => {
    const audit = await fixture('junk');
    audit.send(initialize(1));
    await audit.waitFor(idIs(1));
    assert.match(audit.stdout(), /^Server starting on stdio\.\.\.\n\n/);
    await audit.waitForLog((r) => r.msg === 'exchange' && r.id === 1);
    const found = audit.log().filter((r) => r.rule === 'stdio-not-a-message');
    assert.equal(found.length, 2, 'the banner and the blank line');
    assert.match(String(found[0]?.evidence), /Server starting/);

    const enforce = await fixture('junk', ['--policy', ENFORCE]);
    enforce.send(initialize(1));
    await enforce.waitFor(idIs(1));
    assert.deepEqual(
      enforce.lines().map((l) => JSON.parse(l).id),
      [1],
      'the one line on stdout is the answer',
    );
    await enforce.waitForLog((r) => r.msg === 'exchange' && r.id === 1);
    assert.equal(enforce.log().filter((r) => r.rule === 'stdio-not-a-message').length, 2);
  });

  test("a stdin line that is not JSON: audit forwards it (it kills this server, as it kills the Go and Rust SDKs' servers); enforce answers it -32700 itself and the session goes on", async () => {
    const audit = await fixture('plain');
    audit.sendRaw('this is not json\n');
    const died = await audit.exit;
    assert.notEqual(died.code, 0, 'the server read the line and died');
    const unanswered = await audit.waitForLog((r) => r.msg === 'violation' && r.rule === 'malformed-unanswered');
    assert.match(String(unanswered.message), /line on stdin was not JSON/);

    const enforce = await fixture('plain', ['--policy', ENFORCE]);
    enforce.sendRaw('this is not json\n');
    enforce.sendRaw('{"jsonrpc":"2.0","id":"x","method":42}\n');
    const parse = await enforce.waitFor((m) => (m.error as { code?: number } | undefined)?.code === -32700);
    assert.equal(parse.id, null);
    const invalid = await enforce.waitFor(idIs('x'));
    assert.equal((invalid.error as { code: number }).code, -32600);
    enforce.send(initialize(1));
    await enforce.waitFor(idIs(1));
    await enforce.waitForLog((r) => r.msg === 'exchange' && r.id === 1);
    const blocked = enforce.log().filter((r) => r.msg === 'violation' && r.rule === 'request-envelope');
    assert.equal(blocked.length, 2);
    assert.ok(
      blocked.every((r) => r.applied === true),
      'the log says the block was applied',
    );
  });

  test('audit: a line that is no request answered -32603 on stdout is judged as over HTTP (invalid-request-code, parse-error-code)', async () => {
    const run = await fixture('wrong-codes');
    run.sendRaw('{"jsonrpc":"2.0","id":"x","method":42}\n');
    await run.waitFor(idIs('x'));
    run.sendRaw('this is not json\n');
    await run.waitFor((m) => m.id === null);
    const invalid = await run.waitForLog((r) => r.msg === 'violation' && r.rule === 'invalid-request-code');
    assert.match(String(invalid.message), /method is not a string.*-32603 instead of -32600/);
    await run.waitForLog((r) => r.msg === 'violation' && r.rule === 'parse-error-code');
    // The client got both answers as the server wrote them.
    assert.deepEqual(
      run.messages().map((m) => (m as { error?: { code: number } }).error?.code),
      [-32603, -32603],
    );
  });

  test('server-request-without-capability and propagated-client-error: sampling asked of a client that declared none, its -32601 passed back as the tools/call answer; silent when declared and answered', async () => {
    for (const [capabilities, answer, fires] of [
      [{}, { error: { code: -32601, message: 'Method not found' } }, true],
      [{ sampling: {} }, { result: { role: 'assistant', content: { type: 'text', text: 'ok' }, model: 'm' } }, false],
    ] as const) {
      const run = await fixture('sampler');
      run.send({ ...initialize(1), params: { ...initialize(1).params, capabilities } });
      await run.waitFor(idIs(1));
      run.send(toolCall(2, 'echo', { message: 'hi' }));
      const asked = await run.waitFor((m) => m.method === 'sampling/createMessage');
      run.send({ jsonrpc: '2.0', id: asked.id, ...answer });
      const called = await run.waitFor(idIs(2));
      assert.equal('error' in called, fires, JSON.stringify(called));
      await run.waitForLog((r) => r.msg === 'exchange' && r.id === 2);
      await run.waitForLog((r) => r.msg === 'exchange' && r.id === asked.id);
      const found = (rule: string) => run.log().filter((r) => r.msg === 'violation' && r.rule === rule);
      assert.equal(found('server-request-without-capability').length, fires ? 1 : 0, JSON.stringify(capabilities));
      assert.equal(found('propagated-client-error').length, fires ? 1 : 0, JSON.stringify(capabilities));
      if (!fires) continue;
      assert.match(
        String(found('server-request-without-capability')[0]?.message),
        /sampling\/createMessage to a client whose initialize declared no sampling/,
      );
      const propagated = found('propagated-client-error')[0];
      assert.equal(propagated?.id, 2);
      assert.match(
        String(propagated?.message),
        /tools\/call was answered with error -32601, the error the client gave the server's sampling\/createMessage/,
      );
    }
  });

  test('a well-behaved server gets no stdio finding', async () => {
    const run = await fixture('plain');
    run.send(initialize(1));
    run.send(toolCall(2, 'echo', { message: 'x' }));
    await run.waitFor(idIs(2));
    await run.waitForLog((r) => r.msg === 'exchange' && r.id === 2);
    assert.equal(run.log().filter((r) => typeof r.rule === 'string').length, 0);
  });

  test('a message over several lines: flagged and correlated; under enforce it reaches the client on one line', async () => {
    const audit = await fixture('pretty');
    audit.send(initialize(1));
    await audit.waitFor(idIs(1));
    audit.send(toolCall(2, 'echo', { message: 'pretty' }));
    await audit.waitForLog((r) => r.msg === 'exchange' && r.id === 2);
    assert.ok(audit.stdout().includes('\n  "jsonrpc": "2.0",\n'), 'audit relays the lines as they came');
    assert.equal(audit.log().filter((r) => r.rule === 'stdio-embedded-newline').length, 1);
    assert.equal(audit.log().find((r) => r.msg === 'exchange' && r.id === 2)?.outcome, 'result');
    assert.equal(audit.log().filter((r) => r.rule === 'stdio-not-a-message').length, 0, 'the fragments are not each flagged');

    const enforce = await fixture('pretty', ['--policy', ENFORCE]);
    enforce.send(initialize(1));
    enforce.send(toolCall(2, 'echo', { message: 'pretty' }));
    const answer = await enforce.waitFor(idIs(2));
    assert.deepEqual(answer.result, { content: [{ type: 'text', text: 'Echo: pretty' }] });
    assert.equal(
      enforce
        .stdout()
        .split('\n')
        .filter((l) => l !== '').length,
      2,
      'one line per message',
    );
  });
});

describe('faults of the child', () => {
  // #26: audit added a made-up -32603 "MCP server process exited" the client never gets directly.
  test('the child dies mid-call, under audit: the client sees what it sees directly (no answer, the pipe closes), the exchange is recorded', async () => {
    const lines = [initialize(1), toolCall(7, 'echo', { message: 'last words' })];
    const direct = await directly('die', lines);
    const run = await fixture('die');
    run.send(lines[0]);
    await run.waitFor(idIs(1));
    run.send(lines[1]);
    assert.deepEqual(await run.exit, { code: 3, signal: null }, "mcp-warden exits with the child's code");
    assert.equal(run.stdout(), direct.stdout, 'byte for byte what the server wrote, and nothing more');
    assert.equal(direct.code, 3);
    const record = await run.waitForLog((r) => r.msg === 'exchange' && r.id === 7);
    assert.equal(record.outcome, 'no-response');
    assert.equal(record.proxyError, 'WARDEN_UPSTREAM_EXITED');
    const finding = run.log().find((r) => r.rule === 'no-response' && r.id === 7);
    // How it ended, and its last five stderr lines (redacted), in the finding: why it never answered.
    assert.match(String(finding?.message), /exited \(code 3\)/);
    const evidence = String(finding?.evidence);
    assert.match(
      evidence,
      /^exited with code 3; stderr: fatal: step 3 of shutting down \| .* \| fatal: lost the database at postgres:\/\/app:/,
    );
    assert.doesNotMatch(evidence, /step 2 of|hunter2/);
  });

  test('the child dies mid-call, under enforce: the open request gets one JSON-RPC error with its id, saying the process exited', async () => {
    const run = await fixture('die', ['--policy', ENFORCE]);
    run.send(initialize(1));
    await run.waitFor(idIs(1));
    run.send(toolCall(7, 'echo', { message: 'last words' }));
    const answer = await run.waitFor(idIs(7));
    const error = answer.error as { code: number; message: string; data: { reason: string } };
    assert.equal(error.code, -32603);
    assert.equal(error.message, 'MCP server process exited before responding');
    assert.equal(error.data.reason, 'no-response');
    assert.deepEqual(await run.exit, { code: 3, signal: null });
    assert.equal(run.messages().filter((m) => (m as { id?: unknown }).id === 7).length, 1, 'one answer');
    assert.doesNotMatch(JSON.stringify(answer), /fatal|postgres/, 'the stderr lines stay in the log');
    const record = await run.waitForLog((r) => r.msg === 'exchange' && r.id === 7);
    assert.equal(record.proxyError, 'WARDEN_UPSTREAM_EXITED');
  });

  test('a line over --audit-limit passes through whole and unread, in bounded memory', async () => {
    const run = await fixture('huge', ['--audit-limit', '64kib'], { FIXTURE_BYTES: String(2_000_000) });
    run.send(initialize(1));
    run.send(toolCall(2, 'echo', { message: 'big' }));
    const answer = await run.waitFor(idIs(2), 20_000);
    const content = (answer.result as { content: Array<{ text: string }> }).content;
    assert.equal(content[0]?.text.length, 2_000_000);
    await run.waitForLog((r) => r.msg === 'line over the size limit relayed unread' && r.from === 'server');
  });

  test('a slow tool does not hold up other requests', async () => {
    const run = await fixture('slow', [], { FIXTURE_DELAY_MS: '400' });
    run.send(initialize(1));
    await run.waitFor(idIs(1));
    run.send(toolCall(2, 'echo', { message: 'slow' }));
    run.send({ jsonrpc: '2.0', id: 3, method: 'ping' });
    await run.waitFor(idIs(2));
    const order = run.messages().map((m) => (m as { id: number }).id);
    assert.deepEqual(order, [1, 3, 2]);
    assert.equal((await run.waitForLog((r) => r.msg === 'exchange' && r.id === 2)).outcome, 'result');
  });
});

describe('the process contract', () => {
  test("the log goes to --log-file, the child's stderr with it (a record per line)", async () => {
    const run = await fixture('stderr');
    run.send(initialize(1));
    await run.waitFor(idIs(1));
    await run.waitForLog((r) => r.msg === 'stdio server stderr' && r.line === 'fixture-stderr-line');
    await run.waitForLog((r) => r.msg === 'stdio server started');
    assert.equal(run.stderr(), '', 'nothing on stderr');
    assert.ok(!run.stdout().includes('mcp-warden'), 'no log line on stdout');
  });

  test('the client closing stdin ends the child; mcp-warden exits with its code 0', async () => {
    const run = await fixture('plain');
    run.send(initialize(1));
    await run.waitFor(idIs(1));
    run.child.stdin!.end();
    assert.deepEqual(await run.exit, { code: 0, signal: null });
  });

  test('SIGTERM and SIGINT are passed to the child; mcp-warden exits 128 + the signal as the child did', async () => {
    for (const [signal, code] of [
      ['SIGTERM', 143],
      ['SIGINT', 130],
    ] as const) {
      const run = await fixture('slow', ['--policy', ENFORCE], { FIXTURE_DELAY_MS: '60000' });
      run.send(initialize(1));
      await run.waitFor(idIs(1));
      run.send(toolCall(2, 'echo'));
      // Lines are relayed in order: once the ping is answered, the slow call is open in the child.
      run.send({ jsonrpc: '2.0', id: 3, method: 'ping' });
      await run.waitFor(idIs(3));
      run.child.kill(signal);
      const answer = await run.waitFor(idIs(2));
      assert.equal((answer.error as { message: string }).message, 'MCP server process exited before responding', signal);
      assert.deepEqual(await run.exit, { code, signal: null }, signal);
      assert.ok(run.log().some((r) => r.msg === 'signal passed to the server' && r.signal === signal));
    }
  });

  test('a command that does not exist: exit 127 and a message on stderr', async () => {
    const run = await start(['definitely-not-a-command-mcp-warden']);
    assert.deepEqual(await run.exit, { code: 127, signal: null });
    assert.match(run.stderr(), /cannot start definitely-not-a-command-mcp-warden/);
    // #27: it was logged "stdio server started" before it failed.
    assert.equal(run.log().filter((r) => r.msg === 'stdio server started').length, 0, 'never said to be started');
    assert.ok(run.log().some((r) => r.msg === 'stdio server could not be started'));
  });
});
