// `mcp-warden replay` as a user runs it (a child process) on captures that are hostile or merely
// large (#25): memory stays bounded whatever the number of exchanges (JSON is written as the
// exchanges are replayed, the text lists the first ones and counts the rest), a peer's terminal
// controls are printed escaped, and a gzip bomb or an input past --max-lines stops with a clear
// word and what was read still reported.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { gzipSync } from 'node:zlib';
import { TEXT_LISTED } from '../../src/commands/replay.ts';
import type { ReplayReport } from '../../src/replay/replay.ts';
import { cliArgs } from '../helpers/bundle.ts';
import { recordTraffic } from '../helpers/report-traffic.ts';

const CLI = await cliArgs();
const COPIES = 2_000;

let dir: string;
let template: string[];
let big: string;

/** The CLI in a V8 heap of `heapMiB`, stdout to a file: its exit code, stderr and stdout file. */
async function replayInHeap(args: string[], heapMiB: number): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const stdout = join(dir, `out-${Math.random().toString(36).slice(2)}`);
  const sink = createWriteStream(stdout);
  await once(sink, 'open');
  const child = spawn(process.execPath, [`--max-old-space-size=${heapMiB}`, ...CLI, ...args], { stdio: ['ignore', sink, 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  sink.close();
  return { code, stderr, stdout };
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'warden-replay-hostile-'));
  const { capture } = await recordTraffic(dir, 1);
  template = (await readFile(capture, 'utf8')).split('\n').filter(Boolean);
  // The same sessions' traffic again and again, each copy in sessions of its own.
  const copies: string[] = [];
  for (let k = 0; k < COPIES; k++) copies.push(template.map((l) => l.replace(/("session":"|"mcp-session-id":")/g, `$1c${k}-`)).join('\n'));
  big = join(dir, 'big.jsonl');
  await writeFile(big, `${copies.join('\n')}\n`);
});
after(() => rm(dir, { recursive: true, force: true }));

describe('mcp-warden replay on a large capture, in a 40 MiB heap', () => {
  test('--format json: every exchange, written as it is replayed', { timeout: 180_000 }, async () => {
    const r = await replayInHeap(['replay', big, '--format', 'json'], 40);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(await readFile(r.stdout, 'utf8')) as ReplayReport;
    assert.equal(report.summary.exchanges, template.length * COPIES);
    assert.equal(report.exchanges.length, template.length * COPIES);
    assert.equal(report.exchanges.at(-1)?.line, template.length * COPIES);
    assert.ok(report.summary.findings > 0);
  });

  test('text: the first exchanges listed, the rest counted, the summary over all', { timeout: 180_000 }, async () => {
    const r = await replayInHeap(['replay', big], 40);
    assert.equal(r.code, 0, r.stderr);
    const text = await readFile(r.stdout, 'utf8');
    const total = template.length * COPIES;
    assert.match(text, new RegExp(`… and ${total - TEXT_LISTED} more exchanges \\(--format json lists every one\\)`));
    assert.match(text, new RegExp(`^summary: ${total} exchanges`, 'm'));
    assert.ok(text.length < 4 * 1024 * 1024, `${text.length} characters`);
  });
});

describe('mcp-warden replay on hostile captures', () => {
  test("a peer's terminal controls (OSC 52, screen clear, a line break) are printed escaped", async () => {
    const call = template.find((l) => l.includes('"tools/call"'))!;
    const hostile = '\u001b]52;c;ZWNobyBwd25lZA==\u0007get\u001b[2J\nweather\u009b';
    const line = call.replace(/"name":"[^"]+"/, `"name":${JSON.stringify(hostile)}`);
    const path = join(dir, 'hostile.jsonl');
    await writeFile(path, `${template.join('\n')}\n${line}\n`);
    const r = await replayInHeap(['replay', path], 256);
    assert.equal(r.code, 0, r.stderr);
    const text = await readFile(r.stdout, 'utf8');
    assert.ok(text.includes('\\u001b]52;c;ZWNobyBwd25lZA==\\u0007get\\u001b[2J\\u000aweather\\u009b'), 'shown escaped');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: what must not reach the terminal
    assert.doesNotMatch(text, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });

  test('a gzip bomb: stopped at its ratio, said on stderr, exit 1, what was read reported', async () => {
    const path = join(dir, 'bomb.jsonl.gz');
    const head = Buffer.from(`${template.join('\n')}\n`);
    await writeFile(path, gzipSync(Buffer.concat([head, Buffer.alloc(100 * 1024 * 1024, 10)]), { level: 9 }));
    const r = await replayInHeap(['replay', path, '--format', 'json'], 256);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /cannot read the capture all: it decompresses to more than 200 times its size .*\(what was read is reported\)/);
    const report = JSON.parse(await readFile(r.stdout, 'utf8')) as ReplayReport;
    assert.equal(report.summary.exchanges, template.length);
    assert.ok(report.lines.total < 30 * 1024 * 1024, `${report.lines.total} lines read of 100 MiB`);
  });

  test('--max-lines: the first lines replayed, the stop said', async () => {
    const r = await replayInHeap(['replay', big, '--max-lines', '10', '--format', 'json'], 256);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /it has more than 10 lines; read stopped there/);
    const report = JSON.parse(await readFile(r.stdout, 'utf8')) as ReplayReport;
    assert.equal(report.lines.total, 10);
    assert.equal(report.exchanges.length, 10);
  });

  test('a capture that does not exist: exit 1, nothing on stdout', async () => {
    const r = await replayInHeap(['replay', join(dir, 'nope.jsonl')], 256);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /cannot read the capture: no such file/);
    assert.equal(await readFile(r.stdout, 'utf8'), '');
  });
});
