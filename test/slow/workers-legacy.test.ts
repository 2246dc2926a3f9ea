// `--workers 2` in front of a legacy HTTP+SSE server (2024-11-05, `--transport auto`): a session's
// GET stream is on one worker, its POSTs (each on a new connection) land on either. Every POST is
// judged by the worker that holds its session's stream, as one process judges it: the same
// findings on the same requests as with `--workers 1`, an unknown tool among them, none through
// the pass-through unjudged; under config/enforce.yaml the unknown tool's answer is rewritten
// whichever worker got its POST. The real CLI, the legacy fixture server.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { startLegacyServer } from '../fixtures/legacy-sse-server.ts';
import { driveLegacySession, LEGACY_DRIVE } from '../helpers/legacy-session.ts';
import { startWorkersCli } from '../helpers/workers-cli.ts';

const ENFORCE = fileURLToPath(new URL('../../config/enforce.yaml', import.meta.url));
const closers: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

type Rec = Record<string, unknown>;
const SESSIONS = 4;

const startCli = (upstream: URL, workers: number, extra: string[] = []) =>
  startWorkersCli(upstream, workers, ['--log-level', 'debug', ...extra], closers);

/** Drives SESSIONS sessions one after the other (their streams alternate between workers); returns their answers and how many POSTs were sent. */
async function drive(proxy: URL): Promise<{ answers: Rec[][]; posts: number }> {
  const answers: Rec[][] = [];
  let posts = 0;
  for (let i = 0; i < SESSIONS; i++) {
    answers.push(await driveLegacySession(proxy));
    posts += LEGACY_DRIVE.posts;
  }
  return { answers, posts };
}

/** The findings, as sorted `session id rule` lines. */
const findings = (records: readonly Rec[]): string[] =>
  records
    .filter((r) => r.msg === 'violation')
    .map((r) => `${String(r.session)} ${String(r.id)} ${String(r.rule)}`)
    .sort();
const requestsOf = (records: readonly Rec[]) => records.filter((r) => r.msg === 'exchange' && r.id !== undefined);
const unjudged = (records: readonly Rec[]) => records.filter((r) => r.msg === 'passthrough' && r.unjudged !== undefined);

test('two workers judge legacy SSE sessions whose stream and POSTs land on different workers exactly as one process does', async () => {
  const alone = await startLegacyServer();
  closers.push(alone.close);
  const one = await startCli(alone.sse, 1);
  const sent = await drive(one.url);
  const requests = SESSIONS * LEGACY_DRIVE.requests;
  await one.waitFor((r) => r.msg === 'exchange' && r.id !== undefined, requests);
  const expected = findings(one.records);
  assert.ok(
    expected.some((f) => f.endsWith(' unknown-tool-as-iserror')),
    'one process finds the unknown tool',
  );
  await one.stop();

  const server = await startLegacyServer();
  closers.push(server.close);
  const two = await startCli(server.sse, 2);
  const { answers, posts } = await drive(two.url);
  assert.equal(posts, sent.posts);
  assert.deepEqual(answers, sent.answers, 'the client gets the same answers');
  const exchanges = await two.waitFor((r) => r.msg === 'exchange' && r.id !== undefined, requests);
  assert.equal(requestsOf(two.records).length, requests, 'no request judged twice');
  assert.deepEqual(new Set(exchanges.map((r) => r.worker)), new Set([1, 2]), 'both workers judged sessions');
  const forwarded = two.records.filter((r) => r.msg === 'legacy POST forwarded to the worker holding its stream');
  assert.ok(forwarded.length > 0, 'some POSTs landed on the worker without the stream');
  for (const f of forwarded) assert.notEqual(String(f.worker), f.to, 'forwarded to another worker');
  // Every exchange of a session judged by the worker holding its stream.
  for (const session of new Set(exchanges.map((r) => r.session)))
    assert.equal(new Set(exchanges.filter((r) => r.session === session).map((r) => r.worker)).size, 1, `session ${String(session)}`);
  assert.deepEqual(unjudged(two.records), [], 'no POST through the pass-through');
  assert.deepEqual(findings(two.records), expected, 'the same findings on the same requests');
  assert.equal(await two.stop(), 0);
});

test('enforce, --transport sse (no longer refused with --workers): the unknown tool is rewritten to -32602 whichever worker got its POST', async () => {
  const server = await startLegacyServer();
  closers.push(server.close);
  const two = await startCli(server.sse, 2, ['--policy', ENFORCE, '--transport', 'sse']);
  const { answers } = await drive(two.url);
  for (const session of answers) {
    const unknown = session.find((a) => a.id === 4)!;
    assert.equal((unknown.error as Rec | undefined)?.code, -32602, JSON.stringify(unknown));
    assert.deepEqual((session.find((a) => a.id === 3)!.result as Rec).content, [{ type: 'text', text: 'Echo: hi' }]);
  }
  const forwarded = two.records.filter((r) => r.msg === 'legacy POST forwarded to the worker holding its stream');
  assert.ok(forwarded.length > 0, 'some POSTs landed on the worker without the stream');
  assert.deepEqual(unjudged(two.records), []);
});
