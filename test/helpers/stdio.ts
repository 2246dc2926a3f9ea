// `mcp-warden stdio` as a test starts it: the real CLI (bundled) with a child behind it, driven over
// its pipes by the test (one JSON-RPC message per line), or by the SDK's StdioClientTransport.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundled, cliArgs } from './bundle.ts';

/**
 * server-everything (the reference server, from npm), bundled (an ES module: it awaits at its top
 * level): `node <it> stdio` is the reference stdio server, `node <it> streamableHttp|sse` serves
 * HTTP. Its bundle starts in ~0.4 s of CPU, its files one by one in ~0.7 s.
 */
export const everythingServer = (): Promise<string> => bundled('node_modules/@modelcontextprotocol/server-everything/dist/index.js', 'esm');

/** The command line of the misbehaving fixture server (FIXTURE_MODE picks its fault). */
export const fixtureServer = async (): Promise<string[]> => [process.execPath, await bundled('test/fixtures/stdio-server.ts')];

/** `node <cli> stdio [--log-file <log>] [flags] -- <server...>`: the argv after node (no log file: the log goes to stderr). */
export async function stdioArgs(server: readonly string[], flags: readonly string[], logFile: string | undefined): Promise<string[]> {
  return [...(await cliArgs()), 'stdio', ...(logFile === undefined ? [] : ['--log-file', logFile]), ...flags, '--', ...server];
}

export interface StdioRun {
  child: ChildProcess;
  /** Lines the client got on stdout so far that are JSON, parsed. */
  messages(): unknown[];
  /** Every whole line the client got on stdout so far. */
  lines(): string[];
  /** Raw stdout so far. */
  stdout(): string;
  stderr(): string;
  send(message: unknown): void;
  sendRaw(text: string): void;
  /** Resolves with the first message `pick` accepts, or rejects after `timeoutMs`. */
  waitFor(pick: (m: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The log's records (the log file's, or with `logFile: false` stderr's lines, each parsed). */
  log(): Array<Record<string, unknown>>;
  /** Resolves with the first log record `pick` accepts (a record may follow the message it is about by a moment). */
  waitForLog(pick: (r: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Kills what is still running and removes the log. */
  close(): Promise<void>;
}

const NOT_JSON = Symbol('not JSON');
const parsed = (line: string): unknown => {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return NOT_JSON;
  }
};

/** `logFile: false`: no --log-file, the log goes to stderr (as a client that starts mcp-warden sees it). */
export async function startStdio(
  server: readonly string[],
  opts: { flags?: string[]; env?: NodeJS.ProcessEnv; logFile?: false } = {},
): Promise<StdioRun> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-warden-stdio-'));
  const logFile = opts.logFile === false ? undefined : join(dir, 'log.jsonl');
  const child = spawn(process.execPath, await stdioArgs(server, opts.flags ?? [], logFile), {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...opts.env },
  });
  let out = '';
  let err = '';
  const waiters = new Set<() => void>();
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString('utf8');
    for (const w of waiters) w();
  });
  child.stderr!.on('data', (c: Buffer) => (err += c.toString('utf8')));
  child.stdin!.on('error', () => {});
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  const killOnExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killOnExit);
  /** Whole lines only: the last piece may still be arriving. */
  const lines = (): string[] => out.split('\n').slice(0, -1);
  const messages = (): unknown[] => lines().flatMap((l) => (l.trim() === '' ? [] : [parsed(l)]).filter((m) => m !== NOT_JSON));
  const log = (): Array<Record<string, unknown>> => {
    try {
      // Whole lines only (the last piece may still be arriving).
      return (logFile === undefined ? err : readFileSync(logFile, 'utf8'))
        .split('\n')
        .slice(0, -1)
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    } catch {
      return [];
    }
  };
  return {
    child,
    messages,
    lines,
    stdout: () => out,
    stderr: () => err,
    send: (m) => void child.stdin!.write(`${JSON.stringify(m)}\n`),
    sendRaw: (t) => void child.stdin!.write(t),
    waitFor(pick, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          const found = messages().find((m) => typeof m === 'object' && m !== null && pick(m as Record<string, unknown>));
          if (!found) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found as Record<string, unknown>);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching message in ${timeoutMs} ms; stdout: ${out.slice(0, 2000)}; stderr: ${err.slice(0, 2000)}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    exit,
    log,
    async waitForLog(pick, timeoutMs = 5_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const found = log().find(pick);
        if (found) return found;
        if (Date.now() > until) throw new Error(`no matching log record in ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exit;
      process.off('exit', killOnExit);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An initialize request of `version`. */
export const initialize = (id: number, version = '2025-06-18') => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'stdio-test', version: '1.0.0' } },
});

export const toolCall = (id: number, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});
