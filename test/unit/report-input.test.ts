// The inputs of `report` and `replay` (src/report/input.ts) on hostile and merely large files: a
// gzip bomb stops at its ratio (past the floor), an input stops past its line count with exactly
// that many lines handed on, runs of empty lines come as counts, and a highly compressible real
// log (about 48:1) reads whole.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { INPUT_BOUNDS } from '../../src/config/defaults.ts';
import { InputLimitError, type InputLimits, type InputLine, inputLineBatches, OVERSIZE } from '../../src/report/input.ts';

const dir = await mkdtemp(join(tmpdir(), 'warden-input-'));
after(() => rm(dir, { recursive: true, force: true }));

let n = 0;
async function file(content: Buffer | string): Promise<string> {
  const path = join(dir, `in-${n++}`);
  await writeFile(path, content);
  return path;
}

/** Every item read, and the error that stopped the read (if one did). */
async function readAll(path: string, limits: Partial<InputLimits> = {}): Promise<{ items: InputLine[]; error?: unknown; bytes: number }> {
  const items: InputLine[] = [];
  let bytes = 0;
  try {
    for await (const batch of inputLineBatches(path, (b) => (bytes += b), { ...INPUT_BOUNDS, ...limits })) items.push(...batch);
    return { items, bytes };
  } catch (error) {
    return { items, error, bytes };
  }
}

/**
 * `mib` MiB of line feeds, gzipped: one MiB compressed once, its member repeated (a gzip file may
 * hold several members, read as one stream: RFC 1952 2.2). About 1,000:1, as one member of it all
 * would be, without compressing the whole (0.5 s for 100 MiB).
 */
const bombOf = (mib: number): Buffer => Buffer.concat(new Array<Buffer>(mib).fill(gzipSync(Buffer.alloc(1024 * 1024, 10), { level: 9 })));

/** Lines counted as a run counts: a number is that many lines. */
const lineCount = (items: readonly InputLine[]): number => items.reduce<number>((t, i) => t + (typeof i === 'number' ? i : 1), 0);

describe('report/replay inputs', () => {
  test('lines, \\r\\n, runs of empty lines as counts, a last line without its line feed', async () => {
    const { items, error } = await readAll(await file('a\r\n\n\n\nb\n\nc'));
    assert.equal(error, undefined);
    assert.deepEqual(items, ['a', 3, 'b', 1, 'c']);
  });

  test('a line over lineBytes is OVERSIZE, the next line reads', async () => {
    const { items } = await readAll(await file(`${'x'.repeat(100)}\nok\n`), { lineBytes: 10 });
    assert.deepEqual(items, [OVERSIZE, 'ok']);
  });

  test('past `lines`: exactly that many lines are handed on, then InputLimitError says why', async () => {
    const path = await file(`${'r\n'.repeat(5)}\n\n\n${'s\n'.repeat(5)}`);
    const { items, error } = await readAll(path, { lines: 7 });
    assert.ok(error instanceof InputLimitError);
    assert.match((error as Error).message, /more than 7 lines; read stopped there/);
    assert.equal(lineCount(items), 7);
    assert.deepEqual(items, ['r', 'r', 'r', 'r', 'r', 2]);
    assert.equal((await readAll(path, { lines: 13 })).error, undefined, 'exactly 13 lines: read whole');
  });

  test('a gzip bomb (100 MiB of line feeds in 100 KiB) stops past the floor, at the ratio', async () => {
    const bomb = bombOf(100);
    const { items, error, bytes } = await readAll(await file(bomb));
    assert.ok(error instanceof InputLimitError, String(error));
    assert.match((error as Error).message, /decompresses to more than 200 times its size .*decompression bomb/);
    const read = lineCount(items);
    assert.ok(read >= INPUT_BOUNDS.ratioFloorBytes - 64 * 1024, `${read} lines read`);
    const allowed = Math.max(INPUT_BOUNDS.ratioFloorBytes, INPUT_BOUNDS.ratio * bomb.length);
    assert.ok(read <= allowed + 64 * 1024, `${read} lines read, past ${allowed}`);
    assert.ok(read < 30 * 1024 * 1024, 'far from the 100 MiB it holds');
    assert.ok(bytes <= bomb.length);
  });

  test('the ratio is what the file holds: --max-ratio 2000 reads the same bomb whole', async () => {
    const bomb = bombOf(40);
    const { items, error } = await readAll(await file(bomb), { ratio: 2000 });
    assert.equal(error, undefined);
    assert.equal(lineCount(items), 40 * 1024 * 1024);
  });

  test('a highly compressible log (the same record, counters apart, about 48:1) reads whole', async () => {
    const lines: string[] = [];
    for (let i = 0; i < 120_000; i++) {
      lines.push(
        JSON.stringify({
          level: 30,
          time: `2026-12-01T00:00:${String(i % 60).padStart(2, '0')}.000Z`,
          msg: 'exchange',
          method: 'tools/call',
          id: i,
          tool: 'search',
          session: 'a1b2c3d4',
          status: 200,
          outcome: 'result',
          durationMs: 1.2,
        }),
      );
    }
    const raw = Buffer.from(`${lines.join('\n')}\n`);
    const zipped = gzipSync(raw, { level: 9 });
    assert.ok(
      raw.length > INPUT_BOUNDS.ratioFloorBytes && raw.length / zipped.length > 20,
      `${raw.length} bytes at ${raw.length / zipped.length}:1`,
    );
    const { items, error } = await readAll(await file(zipped));
    assert.equal(error, undefined);
    assert.equal(items.length, 120_000);
  });
});
