// Hot reload on a real file: a good file is swapped in (on reload() and when the file changes,
// including an editor's save by rename), a bad one is rejected and logged while the old policy
// stays, and the object an exchange took before a reload never changes. Waits are bounded polls.
import assert from 'node:assert/strict';
import { mkdtemp, open, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ruleGroups } from '../../src/config/schema.ts';
import { PolicyStore } from '../../src/config/store.ts';
import type { FindingScope, Policy } from '../../src/config/types.ts';
import { RULES } from '../../src/rules/index.ts';
import { createLogger } from '../../src/sinks/logger.ts';
import { Metrics } from '../../src/sinks/metrics.ts';
import { createLogCapture, type LogCapture } from '../helpers/log-capture.ts';

const AUDIT = 'mode: audit\nrules:\n  html-body: log\n';
const ENFORCE = 'mode: enforce\nrules:\n  html-body: block\n';
const ENFORCE_REWRITE = 'mode: enforce\nrules:\n  html-body: rewrite\n';
const BAD = 'mode: enforced\nrules:\n  html-bdy: block\n';

const HTML: FindingScope = { rule: 'html-body', group: 'bodies', severity: 'error', method: 'tools/call', tool: 'x' };

/** Polls `pred` every 10 ms; fails after `timeoutMs` with `what`. */
async function until(pred: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'warden-store-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
/** A fresh policy file with `text`, a store on it and its log; the store is closed after the test. */
async function setup(
  t: { after(fn: () => void): void },
  text: string,
  settleMs?: number,
): Promise<{ file: string; store: PolicyStore; log: LogCapture }> {
  const file = join(dir, `policy-${++n}.yaml`);
  await writeFile(file, text);
  const log = createLogCapture();
  const logger = createLogger({ destination: log.stream, level: 'debug' });
  const opened = await PolicyStore.open({ path: file, logger, debounceMs: 50, ...(settleMs ? { settleMs } : {}) });
  assert.ok(opened.ok, opened.ok ? '' : JSON.stringify(opened.errors));
  t.after(() => opened.store.close());
  return { file, store: opened.store, log };
}

describe('reload()', () => {
  test('a good file is swapped in; the policy an exchange took before stays as it was', async (t) => {
    const { file, store, log } = await setup(t, AUDIT);
    const taken: Policy = store.current();
    assert.equal(taken.mode, 'audit');
    assert.equal(taken.source, file);

    await writeFile(file, ENFORCE);
    assert.deepEqual(await store.reload('signal'), { ok: true });

    const now = store.current();
    assert.notEqual(now, taken);
    assert.equal(now.mode, 'enforce');
    assert.deepEqual(now.setting(HTML), { action: 'block', severity: 'error' });
    // The in-flight exchange's policy is untouched.
    assert.equal(taken.mode, 'audit');
    assert.deepEqual(taken.setting(HTML), { action: 'log', severity: 'error' });
    assert.ok(Object.isFrozen(taken));

    const record = log.find((r) => r.msg === 'policy reloaded');
    assert.ok(record);
    assert.equal(record.policy, file);
    assert.equal(record.mode, 'enforce');
    assert.equal(record.reason, 'signal');
    assert.deepEqual(record.warnings, []);
  });

  test('a bad file is rejected with every error logged, and the old policy stays in force', async (t) => {
    const { file, store, log } = await setup(t, ENFORCE);
    const before = store.current();
    await writeFile(file, BAD);
    const result = await store.reload();
    assert.equal(result.ok, false);
    assert.equal(result.errors?.length, 2);
    assert.equal(store.current(), before);

    const record = log.find((r) => r.msg === 'policy rejected');
    assert.ok(record);
    assert.equal(record.level, 50);
    assert.deepEqual(record.errors, [
      `${file}:1:7: mode: expected one of audit|enforce, found "enforced"; did you mean "enforce"?`,
      `${file}:3:3: rules.html-bdy: unknown rule or group "html-bdy"; allowed: a rule id (see mcp-warden rules) or a group: ${ruleGroups(RULES).join(', ')}; did you mean "html-body"?`,
    ]);
    assert.ok(!log.find((r) => r.msg === 'policy reloaded'));

    // A missing file is rejected the same way.
    await unlink(file);
    const gone = await store.reload();
    assert.deepEqual(
      gone.errors?.map((e) => e.message),
      ['cannot read the policy file: no such file'],
    );
    assert.equal(store.current(), before);
  });

  test('reloads run one at a time, in the order they were asked for', async (t) => {
    const { file, store } = await setup(t, AUDIT);
    await writeFile(file, ENFORCE_REWRITE);
    const finished: number[] = [];
    const reloads = [0, 1, 2].map((i) =>
      store.reload().then((r) => {
        finished.push(i);
        return r;
      }),
    );
    assert.deepEqual(await Promise.all(reloads), [{ ok: true }, { ok: true }, { ok: true }]);
    assert.deepEqual(finished, [0, 1, 2]);
    assert.deepEqual(store.current().setting(HTML), { action: 'rewrite', severity: 'error' });
  });

  test('onChange listeners get the new policy and the previous one', async (t) => {
    const { file, store } = await setup(t, AUDIT);
    const seen: Array<[string, string]> = [];
    const off = store.onChange((p, prev) => seen.push([prev.mode, p.mode]));
    await writeFile(file, ENFORCE);
    await store.reload();
    off();
    await writeFile(file, AUDIT);
    await store.reload();
    assert.deepEqual(seen, [['audit', 'enforce']]);
  });

  test('a reload that changes a setting read at start says so in its warnings', async (t) => {
    const { file, store, log } = await setup(t, 'mode: audit\nupstream: { timeout: 60s }\n');
    await writeFile(file, 'mode: enforce\nupstream: { timeout: 30s }\nlimits: { auditBody: 1mib }\n');
    await store.reload();
    const reloaded = log.records.find((r) => r.msg === 'policy reloaded');
    assert.deepEqual(reloaded?.warnings, [
      'upstream.timeout changed: it is read at start and takes effect when the process restarts',
      'limits.auditBody changed: it is read at start and takes effect when the process restarts',
    ]);
    assert.equal(store.current().mode, 'enforce', 'what a reload does change, it changes');
  });

  test('onReload says how each reload ended, and the metrics count it', async (t) => {
    const file = join(dir, `policy-${++n}.yaml`);
    await writeFile(file, AUDIT);
    const metrics = new Metrics({ sessions: () => 0, openRequests: () => 0 });
    const results: boolean[] = [];
    const opened = await PolicyStore.open({
      path: file,
      logger: createLogger({ destination: createLogCapture().stream }),
      onReload: (ok) => {
        results.push(ok);
        metrics.reloaded(ok);
      },
    });
    assert.ok(opened.ok);
    t.after(() => opened.store.close());
    await writeFile(file, ENFORCE);
    await opened.store.reload();
    await writeFile(file, BAD);
    await opened.store.reload();
    assert.deepEqual(results, [true, false]);
    const text = await metrics.registry.metrics();
    assert.match(text, /^mcp_warden_policy_reloads_total\{result="success"\} 1$/m);
    assert.match(text, /^mcp_warden_policy_reloads_total\{result="failure"\} 1$/m);
    const at = Number(/^mcp_warden_config_last_reload_success_timestamp_seconds (\S+)$/m.exec(text)?.[1]);
    assert.match(text, /^mcp_warden_config_last_reload_successful 0$/m, 'the last reload was rejected');
    assert.ok(Math.abs(at - Date.now() / 1000) < 60, `last reload at ${at}`);
  });
});

describe('open()', () => {
  test('a bad file stops the start with its errors', async () => {
    const file = join(dir, 'bad-at-start.yaml');
    await writeFile(file, BAD);
    const opened = await PolicyStore.open({ path: file, logger: createLogger({ destination: createLogCapture().stream }) });
    assert.equal(opened.ok, false);
    assert.equal(opened.ok ? 0 : opened.errors.length, 2);
  });

  test('no file: the built-in defaults, and reload() keeps them', async () => {
    const log = createLogCapture();
    const opened = await PolicyStore.open({ logger: createLogger({ destination: log.stream }) });
    assert.ok(opened.ok);
    const p = opened.store.current();
    assert.equal(p.source, '(built-in defaults)');
    assert.equal(p.mode, 'audit');
    assert.deepEqual(await opened.store.reload('signal'), { ok: true });
    assert.equal(opened.store.current(), p);
    opened.store.watch();
    opened.store.close();
  });
});

describe('watch()', () => {
  test('a file written in place is swapped in; a bad write is rejected; fixing it is picked up', async (t) => {
    const { file, store, log } = await setup(t, AUDIT);
    const taken = store.current();
    store.watch();

    await writeFile(file, ENFORCE);
    await until(() => store.current().mode === 'enforce', 'the enforce policy');
    assert.equal(taken.mode, 'audit');
    assert.equal(log.find((r) => r.msg === 'policy reloaded')?.reason, 'file');

    const good = store.current();
    await writeFile(file, BAD);
    await log.waitFor((r) => r.msg === 'policy rejected', 5000);
    assert.equal(store.current(), good);

    await writeFile(file, ENFORCE_REWRITE);
    await until(() => store.current().setting(HTML).action === 'rewrite', 'the fixed policy');
  });

  test('an editor that saves by renaming a new file over the old one: every save is seen', async (t) => {
    const { file, store } = await setup(t, AUDIT);
    store.watch();
    const save = async (text: string): Promise<void> => {
      const tmp = `${file}.tmp-${Date.now()}`;
      await writeFile(tmp, text);
      await rename(tmp, file);
    };
    await save(ENFORCE);
    await until(() => store.current().mode === 'enforce', 'the first save');
    await save(ENFORCE_REWRITE);
    await until(() => store.current().setting(HTML).action === 'rewrite', 'the second save (the watcher followed the new file)');
    await save(AUDIT);
    await until(() => store.current().mode === 'audit', 'the third save');
  });

  test('one edit, one reload: a save in place or by rename logs one policy reloaded, however many file events it makes', async (t) => {
    const { file, store, log } = await setup(t, AUDIT);
    store.watch();
    const reloads = () => log.records.filter((r) => r.msg === 'policy reloaded').length;
    await writeFile(file, ENFORCE);
    await until(() => store.current().mode === 'enforce', 'the save in place');
    // Past the debounce and the re-watch after a rename (100 ms and 250 ms): any second event has come.
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(reloads(), 1);
    const tmp = `${file}.tmp`;
    await writeFile(tmp, AUDIT);
    await rename(tmp, file);
    await until(() => store.current().mode === 'audit', 'the save by rename');
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(reloads(), 2);
  });

  test('a file deleted and written again is picked up when it is back', async (t) => {
    const { file, store, log } = await setup(t, AUDIT);
    store.watch();
    await unlink(file);
    await log.waitFor((r) => r.msg === 'policy rejected', 5000);
    assert.equal(store.current().mode, 'audit');
    await writeFile(file, ENFORCE);
    await until(() => store.current().mode === 'enforce', 'the recreated file');
  });

  test('after close(), changes are not followed', async (t) => {
    const { file, store, log } = await setup(t, AUDIT);
    store.watch();
    store.close();
    await writeFile(file, ENFORCE);
    // Nothing can arrive: wait past several debounce periods and check nothing did.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(store.current().mode, 'audit');
    assert.ok(!log.find((r) => r.msg === 'policy reloaded' || r.msg === 'policy rejected'));
  });

  test('a file written in place in two pieces, 300 ms apart: the half is never in force, the whole is (#25)', async (t) => {
    const { file, store, log } = await setup(t, AUDIT, 1000);
    const seen: Policy[] = [];
    store.onChange((p) => seen.push(p));
    store.watch();
    // The first piece alone is a valid policy, and a weaker one: enforce with html-body only logged.
    const handle = await open(file, 'w');
    await handle.write('mode: enforce\n');
    await new Promise((r) => setTimeout(r, 300));
    await handle.write('rules:\n  html-body: block\n');
    await handle.close();
    await until(() => store.current().setting(HTML).action === 'block', 'the whole file');
    assert.deepEqual(
      seen.map((p) => [p.mode, p.setting(HTML).action]),
      [['enforce', 'block']],
      'only the whole file was swapped in',
    );
    assert.equal(log.records.filter((r) => r.msg === 'policy reloaded').length, 1);
  });
});
