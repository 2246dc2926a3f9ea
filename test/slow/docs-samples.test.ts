// Every sample output the docs show (the ```console blocks of README.md and docs/*.md, and
// docs/check.md's `mcp-warden check` printout) is regenerated against the CLI and compared line by
// line, so a sample that drifts from what the command prints fails, naming its page and line. Only
// what varies between runs (ports, durations, session ids, check's random tag, the padding they widen) is normalised.
import { after, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';
import { buildProgram } from '../../src/cli-program.ts';
import { startBrokenServer } from '../../src/demo/broken-server.ts';
import { createClient } from '../../src/demo/client.ts';
import { driveSession, type SessionResult } from '../../src/demo/run.ts';
import { startSdkServer } from '../fixtures/sdk-server.ts';
import { cliArgs } from '../helpers/bundle.ts';
import { type DocLine, docPages, fencesOf } from '../helpers/doc-blocks.ts';

/** `node ...CLI <command>` runs src/cli.ts (a bundle of it: test/helpers/bundle.ts); `--import tsx` resolved here, as commands run in a temp dir. */
const CLI = (await cliArgs()).map((arg) => (arg === 'tsx' ? import.meta.resolve('tsx') : arg));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHILD_TIMEOUT_MS = 60_000;

// ---- the samples ----

/** One command of a sample and the output the page shows for it. */
interface Sample {
  page: string;
  line: number;
  command: string;
  expected: DocLine[];
}

/** A fenced block's samples: run in order in one directory (a `$ cat` writes a file the next command reads). */
interface Block {
  page: string;
  line: number;
  samples: Sample[];
}

/** The ```console blocks of every page, and docs/check.md's ```text printout of `mcp-warden check` (its first line echoes the command). */
function sampleBlocks(): Block[] {
  const blocks: Block[] = [];
  for (const [page, text] of docPages()) {
    for (const { line, info, lines: body } of fencesOf(page, text)) {
      const kind = info.split(/\s+/)[0];
      if (kind === 'console') blocks.push({ page, line, samples: consoleSamples(page, body) });
      else if (kind === 'text' && body[0]?.text.startsWith('mcp-warden check '))
        blocks.push({ page, line, samples: [{ page, line: body[0].line, command: body[0].text, expected: body }] });
    }
  }
  return blocks;
}

function consoleSamples(page: string, body: DocLine[]): Sample[] {
  const samples: Sample[] = [];
  for (let k = 0; k < body.length; k++) {
    const { line, text } = body[k]!;
    if (text.startsWith('$ ')) {
      let command = text.slice(2);
      while (command.endsWith('\\') && k + 1 < body.length) command = `${command.slice(0, -1)} ${body[++k]!.text.trim()}`;
      samples.push({ page, line, command, expected: [] });
    } else if (samples.length === 0) throw new Error(`${page}:${line}: a console block must start with a \`$ \` command line`);
    else samples.at(-1)!.expected.push({ line, text });
  }
  return samples;
}

// ---- what varies from run to run ----

type Normaliser = (lines: string[]) => string[];

const each =
  (re: RegExp, to: string): Normaliser =>
  (lines) =>
    lines.map((l) => l.replace(re, to));

/** The ports of loopback URLs the command chose itself (listen on port 0). */
const urlPorts = each(/http:\/\/127\.0\.0\.1:\d+\//g, 'http://127.0.0.1:<port>/');

/**
 * Durations (`16.6 ms`) and, in a paragraph (a table) that holds one, the padding between cells:
 * a slower call widens the TIME column and shifts every column after it. The cells, and the
 * indentation, stay compared exactly.
 */
const durations: Normaliser = (lines) => {
  const out = [...lines];
  for (let start = 0; start < out.length; ) {
    let end = start;
    while (end < out.length && out[end] !== '') end++;
    if (out.slice(start, end).some((l) => /\d\.\d ms\b/.test(l)))
      for (let k = start; k < end; k++) out[k] = out[k]!.replace(/\d+\.\d ms\b/g, '<ms>').replace(/(?<=\S) {2,}/g, '  ');
    start = end + 1;
  }
  return out;
};

/** `mcp-warden check`'s random tag, in the unknown tool's name. */
const probeTag = each(/mcp_warden_probe_no_such_tool_[0-9a-f]{8}\b/g, 'mcp_warden_probe_no_such_tool_<tag>');

/** replay's SESSION column (a session id's first 8 characters), right before the VERSION column. */
const sessionColumn = each(/\b[0-9a-f]{8}(?= {2}\d{4}-\d\d-\d\d\b)/g, '<session>');

/** Node 22+ (V8) adds `(line L column C)` to JSON.parse's `at position N`: the same error on another Node line. */
const jsonErrorSuffix = each(/(at position \d+) \(line \d+ column \d+\)/g, '$1');

/** What varies, by mcp-warden command. Any other command's output is compared exactly. */
const NORMALISERS: Record<string, Normaliser[]> = {
  demo: [urlPorts, durations],
  check: [urlPorts, probeTag],
  replay: [sessionColumn, jsonErrorSuffix],
};

// ---- the inputs the samples read ----

const children = new Set<ChildProcess>();
const root = mkdtempSync(join(tmpdir(), 'mcp-warden-docs-samples-'));
after(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

/**
 * The demo's session through `mcp-warden proxy` under a copy of config/audit.yaml with capture on,
 * as docs/replay-and-report.md describes it: the proxy's stdout (warden.log) and its capture.
 */
async function recordDemoSession(): Promise<{ log: string; capture: string }> {
  const dir = join(root, 'recording');
  mkdirSync(dir);
  const policy = join(dir, 'audit.yaml');
  writeFileSync(policy, `${readFileSync(join(ROOT, 'config/audit.yaml'), 'utf8')}\ncapture: { path: ./warden-capture.jsonl }\n`);
  const server = await startBrokenServer();
  try {
    const proxy = spawn(process.execPath, [...CLI, 'proxy', '--upstream', server.url.href, '--listen', '127.0.0.1:0', '--policy', policy], {
      cwd: dir,
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(proxy);
    let log = '';
    let stderr = '';
    proxy.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => proxy.once('close', resolve)).finally(() => children.delete(proxy));
    const listening = new Promise<URL>((resolve, reject) => {
      proxy.stdout!.on('data', (c: Buffer) => {
        log += c.toString('utf8');
        const at = /"listen":"([^"]+)"[^\n]*"msg":"listening"/.exec(log);
        if (at) resolve(new URL(at[1]!));
      });
      void exited.then((code) => reject(new Error(`the proxy exited (${code}) before listening: ${stderr}${log}`)));
    });
    const client = createClient(await listening, 20_000);
    let session: SessionResult;
    try {
      session = await driveSession(client);
    } finally {
      await client.close();
      proxy.kill('SIGTERM');
    }
    assert.equal(await exited, 0, `the proxy's exit; stderr: ${stderr}`);
    const labels: string[] = [];
    for (const line of log.split('\n'))
      if (line.includes('"msg":"exchange"') || line.includes('"msg":"session end"')) {
        const r = JSON.parse(line) as { msg: string; method?: string; tool?: string };
        labels.push(r.msg === 'session end' ? 'DELETE' : r.tool ? `${r.method} ${r.tool}` : String(r.method));
      }
    // The demo's own session: every request logged, and the rows README.md's demo sample shows.
    const sent = [...[...session.byId.values()].map((r) => r.label), 'DELETE'];
    assert.deepEqual(labels, sent, 'the session recorded');
    assert.deepEqual(sent, readmeDemoRows(), "the demo's session is not the one README.md's demo sample shows");
    return { log, capture: readFileSync(join(dir, 'warden-capture.jsonl'), 'utf8') };
  } finally {
    await server.close();
  }
}

/** The METHOD and TOOL cells of the first table of README.md's `mcp-warden demo` sample. */
function readmeDemoRows(): string[] {
  const demo = sampleBlocks()
    .flatMap((b) => b.samples)
    .find((s) => s.page === 'README.md' && s.command === 'mcp-warden demo');
  const lines = demo?.expected.map((l) => l.text) ?? [];
  const header = lines.findIndex((l) => /^\s+METHOD\s+TOOL\s+HTTP\b/.test(l));
  const rows: string[] = [];
  for (let k = header + 1; header >= 0 && k < lines.length && lines[k] !== ''; k++) {
    const cells = lines[k]!.trim().split(/ {2,}/);
    rows.push(/^\d{3}$/.test(cells[1] ?? '') ? cells[0]! : `${cells[0]} ${cells[1]}`);
  }
  return rows;
}

let recording: Promise<{ log: string; capture: string }> | undefined;

/**
 * Writes into `dir` the files the block's commands read: config/ (a link), and for the replay and
 * report samples of docs/replay-and-report.md the recorded log and capture (the capture a replay
 * sample reads with a truncated last line added on purpose, as the page says) and stricter.yaml
 * (config/enforce.yaml with html-body: block and legacy-range-code: off).
 */
async function prepare(dir: string, block: Block): Promise<void> {
  mkdirSync(dir);
  symlinkSync(join(ROOT, 'config'), join(dir, 'config'), 'dir');
  const commands = block.samples.map((s) => s.command).join('\n');
  if (!/warden-capture\.jsonl|warden\.log/.test(commands)) return;
  recording ??= recordDemoSession();
  const { log, capture } = await recording;
  const lines = capture.trimEnd().split('\n');
  // The truncated line: the first 120 characters of the last one (cut right after its protocolVersion).
  const bad = /\bmcp-warden replay warden-capture\.jsonl\b/.test(commands) ? `${lines.at(-1)!.slice(0, 120)}\n` : '';
  writeFileSync(join(dir, 'warden-capture.jsonl'), `${lines.join('\n')}\n${bad}`);
  writeFileSync(join(dir, 'warden.log'), log);
  const stricter = parseDocument(readFileSync(join(ROOT, 'config/enforce.yaml'), 'utf8'));
  stricter.setIn(['rules', 'html-body'], 'block');
  stricter.setIn(['rules', 'legacy-range-code'], 'off');
  writeFileSync(join(dir, 'stricter.yaml'), stricter.toString());
}

// ---- running a command ----

/** The environment without MCP_WARDEN_* settings of whoever runs the tests. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MCP_WARDEN_')));
  return { ...env, ...extra };
}

/** A shell line's words: quotes kept together (and removed), nothing expanded. */
function words(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) out.push(m[1] ?? m[2] ?? m[3]!);
  return out;
}

interface Ran {
  code: number | null;
  output: string;
}

function run(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    // A bound, not a wait: only a command that never ends (a proxy that did start) meets it.
    const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_TIMEOUT_MS);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      children.delete(child);
      // What a terminal shows: stdout, then stderr (no sample has both).
      resolve({ code, output: stdout + stderr });
    });
  });
}

/** The default of `mcp-warden proxy --listen` (127.0.0.1:8787), from the program itself. */
function defaultListen(): string {
  const proxy = buildProgram().commands.find((c) => c.name() === 'proxy')!;
  const listen = proxy.options.find((o) => o.long === '--listen')!;
  return String(listen.defaultValueDescription);
}

/**
 * A proxy command never binds a fixed port: its --listen (made explicit when the sample relies on
 * the default) and --admin ports become `held` (a port this test occupies) where the sample's output
 * names the address, as an address in use, and 0 (a free port the OS picks) elsewhere.
 */
async function withoutFixedPorts(
  args: string[],
  expected: DocLine[],
  held: () => Promise<number>,
): Promise<{ args: string[]; expected: DocLine[] }> {
  if (args[0] !== 'proxy') return { args, expected };
  const out = [...args];
  if (!out.some((a) => /^(-l|--listen)(=|$)/.test(a))) out.push('--listen', defaultListen());
  let lines = expected;
  for (let k = 1; k < out.length; k++) {
    const flag = /^(-l|--listen|--admin)(=(.*))?$/.exec(out[k]!);
    if (!flag) continue;
    const at = flag[3] === undefined ? ++k : k;
    const address = flag[3] ?? out[at]!;
    const host = address.slice(0, address.lastIndexOf(':'));
    const named = lines.some((l) => l.text.includes(address));
    const port = named ? await held() : 0;
    const now = `${host}:${port}`;
    out[at] = flag[3] === undefined ? now : `${flag[1]}=${now}`;
    if (named) lines = lines.map((l) => ({ ...l, text: l.text.replaceAll(address, now) }));
  }
  return { args: out, expected: lines };
}

/** A port on 127.0.0.1 the OS picked, held until `closers` run. */
async function occupiedPort(closers: Array<() => Promise<void>>): Promise<number> {
  const server: Server = createServer();
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return (server.address() as AddressInfo).port;
}

/** Runs one sample's command in `dir`; resolves with what it printed and the output to expect (after port substitution). */
async function runSample(sample: Sample, dir: string): Promise<{ printed: string[]; expected: DocLine[]; kind: string; as: string }> {
  const pipeline = sample.command.split(/\s+\|\s+/);
  let argv = words(pipeline[0]!);
  const env: Record<string, string> = {};
  while (argv[0] && /^[A-Z_][A-Z0-9_]*=/.test(argv[0])) {
    const [name, ...value] = argv[0].split('=');
    env[name!] = value.join('=');
    argv = argv.slice(1);
  }
  if (argv[0] === 'cat' && argv.length === 2 && pipeline.length === 1) {
    // The file's content is the sample itself: written for the commands after it.
    writeFileSync(join(dir, argv[1]!), sample.expected.map((l) => `${l.text}\n`).join(''));
    return { printed: sample.expected.map((l) => l.text), expected: sample.expected, kind: 'cat', as: sample.command };
  }
  if (argv[0] !== 'mcp-warden')
    throw new Error(`${sample.page}:${sample.line}: no way to run \`${sample.command}\` (teach test/slow/docs-samples.test.ts)`);
  let args = argv.slice(1);
  let expected = sample.expected;
  const closers: Array<() => Promise<void>> = [];
  let ran: Ran;
  try {
    if (args[0] === 'check') {
      // docs/check.md's printout is of the official SDK server (test/fixtures/sdk-server.ts).
      const server = await startSdkServer({ mode: 'json' });
      closers.push(server.close);
      args = ['check', server.url.href, ...args.slice(2)];
    }
    ({ args, expected } = await withoutFixedPorts(args, expected, () => occupiedPort(closers)));
    ran = await run(args, dir, cleanEnv(env));
  } finally {
    for (const close of closers.reverse()) await close();
  }
  let printed = ran.output.replace(/\n$/, '').split('\n');
  for (const stage of pipeline.slice(1)) {
    const tail = /^tail -n (\d+)$/.exec(stage.trim());
    if (!tail) throw new Error(`${sample.page}:${sample.line}: no way to run \`| ${stage}\` (teach test/slow/docs-samples.test.ts)`);
    printed = printed.slice(-Number(tail[1]));
  }
  const as = [
    ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
    'mcp-warden',
    ...args,
    ...pipeline.slice(1).flatMap((p) => ['|', p]),
  ].join(' ');
  return { printed, expected, kind: args[0]!, as };
}

// ---- comparing ----

/** The lines of `a` and `b` as a diff: ` ` kept, `-` only in a (the doc), `+` only in b (printed). */
function diffLines(a: readonly string[], b: readonly string[]): Array<{ op: ' ' | '-' | '+'; i: number; text: string }> {
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: Array<{ op: ' ' | '-' | '+'; i: number; text: string }> = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) out.push({ op: ' ', i: i++, text: b[j++]! });
    else if (i < a.length && (j === b.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) out.push({ op: '-', i, text: a[i++]! });
    else out.push({ op: '+', i, text: b[j++]! });
  }
  return out;
}

/** Fails, with a diff naming the page and line of each differing line, unless `printed` is what the sample shows. */
function assertSample(sample: Sample, ran: { expected: DocLine[]; printed: string[]; kind: string; as: string }): void {
  const { expected, printed, kind } = ran;
  const normalise = (lines: string[]) => (NORMALISERS[kind] ?? []).reduce((ls, n) => n(ls), lines);
  // A sample ending in `...` shows the first lines of the output only.
  const partial = expected.at(-1)?.text === '...';
  const shown = partial ? expected.slice(0, -1) : expected;
  const want = normalise(shown.map((l) => l.text));
  const got = normalise(partial ? printed.slice(0, shown.length) : printed);
  const where = (i: number) => `${sample.page}:${shown[Math.min(i, shown.length - 1)]?.line ?? sample.line}`;
  const problems: string[] = [];
  if (partial && printed.length <= shown.length)
    problems.push(`  the sample ends in "...", but the command printed only ${printed.length} lines`);
  const diff = diffLines(want, got);
  const width = Math.max(...shown.map((_, i) => where(i).length), 'printed'.length);
  for (const d of diff) if (d.op !== ' ') problems.push(`  ${d.op} ${(d.op === '-' ? where(d.i) : 'printed').padEnd(width)} | ${d.text}`);
  if (problems.length === 0) return;
  assert.fail(
    [
      `${sample.page}:${sample.line}: the sample of \`${sample.command}\` no longer matches what it prints`,
      ...(ran.as === sample.command ? [] : [`  run as \`${ran.as}\``]),
      '  (- the doc shows, + the command printed, line by line after normalising what varies between runs)',
      ...problems,
    ].join('\n'),
  );
}

// ---- the tests ----

const blocks = sampleBlocks();

test('the samples are found: every console block, and the check printout', () => {
  const samples = blocks.flatMap((b) => b.samples);
  assert.ok(samples.length >= 13, `only ${samples.length} sample commands found: is the block reader broken?`);
  for (const page of [
    'README.md',
    'docs/operations.md',
    'docs/policy.md',
    'docs/replay-and-report.md',
    'docs/rules.md',
    'docs/troubleshooting.md',
  ])
    assert.ok(
      samples.some((s) => s.page === page),
      `no sample found in ${page}`,
    );
  const checks = samples.filter((s) => s.command.startsWith('mcp-warden check '));
  assert.equal(checks.length, 1, 'one check printout, of the official SDK server: another needs its server taught here');
  const checkPage = docPages().get(checks[0]!.page)!.split('\n');
  assert.match(
    checkPage.slice(0, checks[0]!.line - 1).join('\n'),
    /official TypeScript SDK server[^\n]*:\n+```text$/,
    'the printout is said to be of the SDK server',
  );
});

describe('every sample output in the docs is what the command prints', { concurrency: 3 }, () => {
  blocks.forEach((block, n) => {
    test(`${block.page}:${block.line}`, { timeout: 120_000 }, async (t: TestContext) => {
      const dir = join(root, `block-${n}`);
      await prepare(dir, block);
      for (const sample of block.samples)
        await t.test(`${sample.page}:${sample.line} $ ${sample.command}`, async () => {
          assertSample(sample, await runSample(sample, dir));
        });
    });
  });
});
