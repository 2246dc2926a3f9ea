// Issue 25, stdio items, with the real CLI between the test's pipes and the fixture server:
// 3. A client that writes requests the proxy answers itself and never reads: the proxy stops
//    reading its input once its stdout is full, and once the client reads, every answer comes, in
//    order.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { fixtureServer, startStdio, type StdioRun } from '../helpers/stdio.ts';

const ENFORCE = new URL('../../config/enforce.yaml', import.meta.url).pathname;
const runs: StdioRun[] = [];
after(async () => {
  await Promise.all(runs.map((r) => r.close()));
});
const fixture = async (mode: string, flags: string[] = []): Promise<StdioRun> => {
  const run = await startStdio(await fixtureServer(), { flags, env: { FIXTURE_MODE: mode } });
  runs.push(run);
  return run;
};

/** Resolves once `state()` has stayed the same for `polls` polls in a row: nothing moves any more. */
async function settled(state: () => string, polls = 5, everyMs = 200): Promise<void> {
  let last = state();
  for (let same = 0; same < polls; ) {
    await new Promise((r) => setTimeout(r, everyMs));
    const now = state();
    same = now === last ? same + 1 : 0;
    last = now;
  }
}

describe('a client that writes without reading', () => {
  test('requests the proxy answers itself: it stops reading them once stdout is full; read later, every answer comes in order', async () => {
    const run = await fixture('plain', ['--policy', ENFORCE]);
    const { stdin, stdout } = run.child;
    stdout!.pause();
    // Nested past 128 levels: enforce.yaml blocks it (unreadable-request) and answers -32600 itself.
    const deep = `${'['.repeat(130)}${']'.repeat(130)}`;
    const COUNT = 20_000;
    let written = 0;
    for (let id = 1; id <= COUNT; id++) {
      const line = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"a":${deep}}}}\n`;
      written += line.length;
      stdin!.write(line);
    }
    // Once neither the test's writes nor the proxy's log move, what the proxy took is what its
    // pipes and buffers hold, not the input (the log shows it working through what it took).
    await settled(() => `${stdin!.writableLength} ${run.log().length}`);
    const unread = stdin!.writableLength;
    assert.ok(unread > 0, 'the proxy read everything while nobody read its answers');
    const taken = written - unread;
    assert.ok(taken < written / 4, `the proxy took ${taken} of ${written} bytes while nobody read its answers`);

    stdout!.resume();
    stdin!.end();
    assert.deepEqual(await run.exit, { code: 0, signal: null });
    const answers = run.messages() as Array<{ id: number; error?: { code: number } }>;
    assert.deepEqual(
      answers.map((m) => m.id),
      Array.from({ length: COUNT }, (_, i) => i + 1),
      'every answer, once, in order',
    );
    assert.ok(answers.every((m) => m.error?.code === -32600));
  });
});
