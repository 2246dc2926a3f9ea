// The production install (the Dockerfile's runtime stage: `npm ci --omit=dev`, no devDependencies)
// started on a pseudo-terminal, as `docker run -it` and `npx mcp-warden` do. It logs one pretty
// line per record there (the printer is mcp-warden's own, src/sinks/pretty.ts), and JSON lines
// with --no-pretty.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');
let dir = '';

/** Runs `command` under script(1) (a pseudo-terminal), stops it once `until` matches its output or after `ms`. */
function onTerminal(command: string, env: NodeJS.ProcessEnv, until: RegExp, ms = 15_000): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    const stop = (): void => {
      clearTimeout(timer);
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(stop, ms);
    const onData = (c: Buffer): void => {
      out += c.toString();
      if (until.test(out)) stop();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
  });
}

describe('production install on a terminal', { timeout: 180_000 }, () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mcp-warden-prod-'));
    // The build's emit without its type check (--noCheck: the same files, byte for byte, in half
    // the CPU); `npm test` type-checks src/ first (npm run typecheck) with the same options.
    await run(process.execPath, [TSC, '-p', 'tsconfig.build.json', '--outDir', join(dir, 'dist'), '--noCheck'], { cwd: ROOT });
    for (const f of ['package.json', 'package-lock.json']) await cp(join(ROOT, f), join(dir, f));
    await cp(join(ROOT, 'config'), join(dir, 'config'), { recursive: true });
    await run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: dir });
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const env = { ...process.env, MCP_WARDEN_PRETTY: undefined, MCP_WARDEN_NO_PRETTY: undefined };
  const proxyCmd = 'node dist/cli.js proxy --upstream http://127.0.0.1:9/mcp --listen 127.0.0.1:0';

  test('`proxy` on a TTY starts and logs one coloured line per record', async () => {
    const out = await onTerminal(proxyCmd, env, /policy in force/);
    assert.ok(out.includes('\x1b[32mINFO \x1b[0m listening  listen=http://127.0.0.1:'), out);
    assert.doesNotMatch(out, /"msg":/, 'no JSON line');
  });

  test('--no-pretty on a TTY: JSON lines', async () => {
    const out = await onTerminal(`${proxyCmd} --no-pretty`, env, /"msg":"policy in force"/);
    assert.match(out, /"msg":"listening"/);
  });

  test('MCP_WARDEN_NO_PRETTY is --no-pretty', async () => {
    const { stdout } = await run(
      'node',
      [
        '-e',
        'import("./dist/cli-program.js").then(({ buildProgram }) => { const p = buildProgram().commands.find((c) => c.name() === "proxy"); p.action((o) => console.log(JSON.stringify({ pretty: o.pretty }))); p.parse(["--upstream", "http://127.0.0.1:9/mcp"], { from: "user" }); })',
      ],
      {
        cwd: dir,
        env: { ...env, MCP_WARDEN_NO_PRETTY: '1' },
      },
    );
    assert.deepEqual(JSON.parse(stdout), { pretty: false });
  });
});
