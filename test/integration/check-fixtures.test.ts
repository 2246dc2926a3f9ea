// `mcp-warden check` against hand-written servers on loopback: a correct server passes every probe
// of the versions it speaks; a server broken in one way fails exactly the probes about that; the
// era is found the way a dual-era client finds it; 401, hangs, redirects, closed ports, byte caps
// and deadlines end in a verdict, never a hang. Real sockets, bounded timeouts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { renderSarif } from '../../src/check/report-sarif.ts';
import type { CheckReport, Verdict } from '../../src/check/report.ts';
import { CHECK_FAULTS, startCheckServer, type CheckFault, type CheckServer, type CheckServerOptions } from '../fixtures/check-servers.ts';
import { startRawServer } from '../fixtures/raw-server.ts';
import { sarifValidator } from '../fixtures/sarif-schema.ts';
import { check } from '../helpers/check.ts';

const LEGACY = '2025-11-25';
const MODERN = '2026-07-28';

async function withServer<T>(opts: CheckServerOptions, run: (s: CheckServer) => Promise<T>): Promise<T> {
  const server = await startCheckServer(opts);
  try {
    return await run(server);
  } finally {
    await server.close();
  }
}

/** Every probe that did not pass, with its verdict (era probes of an era not spoken are skips). */
const notPassing = (r: CheckReport): Record<string, Verdict> =>
  Object.fromEntries(r.probes.filter((p) => p.verdict !== 'pass' && p.verdict !== 'skip').map((p) => [p.probe, p.verdict]));
const verdicts = (r: CheckReport): Record<string, Verdict> => Object.fromEntries(r.probes.map((p) => [p.probe, p.verdict]));

describe('a correct server passes every probe', () => {
  for (const versions of [[LEGACY], ['2025-06-18'], [MODERN], [LEGACY, MODERN]]) {
    test(`speaking ${versions.join(' and ')}`, async () => {
      await withServer({ versions }, async (s) => {
        const r = await check(s.url);
        assert.deepEqual(
          notPassing(r),
          {},
          JSON.stringify(
            r.probes.filter((p) => p.findings.length > 0),
            null,
            1,
          ),
        );
        const skips = r.probes.filter((p) => p.verdict === 'skip').map((p) => p.probe);
        assert.deepEqual(skips, versions.includes(MODERN) ? (versions.length === 1 ? ['initialize'] : []) : ['discover']);
        assert.deepEqual(r.protocol.spoken, versions);
        assert.equal(r.protocol.used, versions.includes(MODERN) ? MODERN : versions[0]);
        assert.equal(r.exitCode, 0);
        assert.ok(
          s.received.every((x) => x.path === '/mcp'),
          'every request goes to the URL given',
        );
        assert.ok(!s.received.some((x) => x.http === 'GET'), 'no GET streams are opened');
        const calls = s.received.filter((x) => x.method === 'tools/call').map((x) => x.params!);
        assert.ok(!calls.some((c) => c.name === 'delete_records'), 'a tool annotated destructive is never called');
        for (const c of calls.filter((c) => c.name === 'lookup'))
          assert.ok(!('query' in (c.arguments as object)), 'every call of a real tool leaves a required argument out');
        const sessions = new Set(s.received.filter((x) => x.method === undefined && x.http === 'DELETE').map((x) => x.path));
        if (!versions.includes(MODERN) || versions.length > 1) assert.ok(sessions.size > 0, 'the legacy sessions opened are ended');
      });
    });
  }
});

type Expected = Partial<Record<string, Verdict>>;
/** What each fault breaks, by the era of the server: exactly these probes, with these verdicts. */
const BREAKS: Record<CheckFault, { legacy: Expected; modern: Expected }> = {
  'unknown-method-code': { legacy: { 'unknown-method': 'fail' }, modern: { 'unknown-method': 'fail' } },
  'unknown-method-status': { legacy: {}, modern: { 'unknown-method': 'fail' } },
  'leak-stack': { legacy: { 'unknown-method': 'fail' }, modern: { 'unknown-method': 'fail' } },
  'unknown-tool-iserror': { legacy: { 'unknown-tool': 'fail' }, modern: { 'unknown-tool': 'fail' } },
  'unknown-tool-result': { legacy: { 'unknown-tool': 'fail' }, modern: { 'unknown-tool': 'fail' } },
  'argument-runs': {
    legacy: { 'tool-argument-type': 'fail', 'tool-argument-missing': 'fail' },
    modern: { 'tool-argument-type': 'fail', 'tool-argument-missing': 'fail' },
  },
  'argument-vague': {
    legacy: { 'tool-argument-type': 'warn', 'tool-argument-missing': 'warn' },
    modern: { 'tool-argument-type': 'warn', 'tool-argument-missing': 'warn' },
  },
  'resource-code': { legacy: { 'unknown-resource': 'warn' }, modern: { 'unknown-resource': 'fail' } },
  'resource-empty': { legacy: { 'unknown-resource': 'fail' }, modern: { 'unknown-resource': 'fail' } },
  'parse-error-code': { legacy: { 'malformed-json': 'fail' }, modern: { 'malformed-json': 'fail' } },
  'parse-error-html': { legacy: { 'malformed-json': 'fail' }, modern: { 'malformed-json': 'fail' } },
  'version-data': { legacy: { 'unsupported-version': 'fail' }, modern: { 'unsupported-version': 'fail' } },
  'version-status': { legacy: {}, modern: { 'unsupported-version': 'fail' } },
  'header-mismatch': { legacy: {}, modern: { 'header-mismatch': 'fail' } },
  'missing-meta': { legacy: {}, modern: { 'missing-meta': 'fail' } },
  'notification-body': { legacy: { notification: 'fail' }, modern: { notification: 'fail' } },
  'accept-ignored': { legacy: { 'wrong-accept': 'warn' }, modern: { 'wrong-accept': 'warn' } },
  'origin-ignored': { legacy: { 'foreign-origin': 'fail' }, modern: { 'foreign-origin': 'fail' } },
  'origin-status': { legacy: { 'foreign-origin': 'warn' }, modern: { 'foreign-origin': 'warn' } },
  'version-header-ignored': { legacy: { 'bad-version-header': 'fail' }, modern: {} },
};

describe('a server broken in one way fails exactly the matching probes', () => {
  for (const fault of CHECK_FAULTS) {
    for (const era of ['legacy', 'modern'] as const) {
      test(`${fault} (${era === 'legacy' ? LEGACY : MODERN})`, async () => {
        await withServer({ versions: [era === 'legacy' ? LEGACY : MODERN], faults: [fault] }, async (s) => {
          const r = await check(s.url);
          const expected = BREAKS[fault][era];
          assert.deepEqual(
            notPassing(r),
            expected,
            JSON.stringify(
              r.probes.filter((p) => p.findings.length > 0).map((p) => [p.probe, p.findings]),
              null,
              1,
            ),
          );
          assert.equal(r.exitCode, Object.values(expected).includes('fail') ? 1 : 0);
          for (const p of r.probes.filter((x) => x.verdict === 'fail')) assert.ok(p.fix, `${p.probe} says how to fix it`);
        });
      });
    }
  }

  test('the SARIF of a real run validates', async () => {
    await withServer({ versions: [MODERN], faults: ['unknown-tool-iserror', 'origin-status'] }, async (s) => {
      const validate = sarifValidator();
      assert.ok(validate(JSON.parse(renderSarif(await check(s.url)))), JSON.stringify(validate.errors));
    });
  });
});

describe('versions', () => {
  test('a server that only speaks 2025-06-18: initialize negotiates it, the probes run under it', async () => {
    await withServer({ versions: ['2025-06-18'] }, async (s) => {
      const r = await check(s.url);
      assert.deepEqual([r.protocol.spoken, r.protocol.used], [['2025-06-18'], '2025-06-18']);
      assert.equal(verdicts(r).discover, 'skip');
      assert.match(r.probes[0]!.got, /the server does not speak 2026-07-28/);
      assert.equal(r.probes.find((p) => p.probe === 'foreign-origin')!.expected, 'a 4xx rejection', '403 is required from 2025-11-25 on');
      const init = s.received.find((x) => x.method === 'initialize')!;
      assert.equal(init.params!.protocolVersion, LEGACY, 'a dual-era client proposes the newest legacy version');
    });
  });

  test('a server that only speaks 2026-07-28: no session, modern probes, the legacy initialize skipped', async () => {
    await withServer({ versions: [MODERN] }, async (s) => {
      const r = await check(s.url);
      assert.deepEqual([r.protocol.spoken, r.protocol.used, verdicts(r).initialize], [[MODERN], MODERN, 'skip']);
      assert.ok(['header-mismatch', 'missing-meta'].every((p) => verdicts(r)[p] === 'pass'));
      assert.equal(s.received[0]!.method, 'server/discover', 'server/discover comes first');
    });
  });

  test('--protocol picks one version: only its era is tried', async () => {
    await withServer({ versions: ['2025-06-18', LEGACY, MODERN] }, async (s) => {
      const r = await check(s.url, { protocol: '2025-06-18' });
      assert.equal(r.protocol.used, '2025-06-18');
      assert.ok(!r.probes.some((p) => p.probe === 'discover'));
      assert.ok(!s.received.some((x) => x.method === 'server/discover'));
    });
    await withServer({ versions: [LEGACY] }, async (s) => {
      const r = await check(s.url, { protocol: '2025-06-18' });
      assert.equal(r.protocol.used, LEGACY);
      assert.equal(r.protocol.note, 'asked for 2025-06-18; the server negotiated 2025-11-25, and the probes ran under it');
    });
    await withServer({ versions: [LEGACY] }, async (s) => {
      const r = await check(s.url, { protocol: MODERN });
      assert.equal(r.protocol.used, undefined);
      assert.equal(verdicts(r).discover, 'fail');
      assert.ok(r.probes.slice(1).every((p) => p.verdict === 'skip'));
      assert.equal(r.exitCode, 1);
    });
  });
});

describe('tool calls', () => {
  test('--no-tool-calls sends no tools/call at all', async () => {
    await withServer({ versions: [LEGACY] }, async (s) => {
      const r = await check(s.url, { toolCalls: false });
      assert.ok(!s.received.some((x) => x.method === 'tools/call'));
      assert.deepEqual(
        ['unknown-tool', 'tool-argument-type', 'tool-argument-missing'].map((p) => verdicts(r)[p]),
        ['skip', 'skip', 'skip'],
      );
      assert.equal(r.exitCode, 0);
    });
  });

  test('--safe-tool names the only tool the argument probes call, destructive or not', async () => {
    await withServer({ versions: [LEGACY] }, async (s) => {
      await check(s.url, { safeTools: ['delete_records'] });
      const names = s.received.filter((x) => x.method === 'tools/call').map((x) => x.params!.name);
      assert.deepEqual(
        names.filter((n) => !String(n).startsWith('mcp_warden_probe_')),
        ['delete_records', 'delete_records'],
      );
    });
  });
});

describe('servers that cannot be checked', () => {
  test('401: exit 2, needs credentials, the WWW-Authenticate challenge; nothing more is sent', async () => {
    const challenge = 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource", scope="mcp"';
    await withServer({ versions: [LEGACY], auth: { token: 's3cret', challenge } }, async (s) => {
      const r = await check(s.url);
      assert.deepEqual([r.exitCode, r.reach.status, r.reach.challenge], [2, 'needs-credentials', challenge]);
      assert.equal(s.received.length, 1);
      const ok = await check(s.url, { headers: { Authorization: 'Bearer s3cret' } });
      assert.equal(ok.exitCode, 0, 'the credentials from --header are sent with every probe');
      assert.ok(!JSON.stringify(ok).includes('s3cret'), 'credentials never appear in the report');
    });
  });

  test('a server that never answers: timeout verdicts and exit 2, within the probe timeouts', async () => {
    await withServer({ versions: [LEGACY], hang: 'all' }, async (s) => {
      const started = Date.now();
      const r = await check(s.url, { probeTimeoutMs: 300 });
      assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
      assert.deepEqual(verdicts(r), { discover: 'timeout', initialize: 'timeout' });
      assert.deepEqual([r.exitCode, r.reach.status, r.reach.detail], [2, 'unreachable', 'no answer within 300 ms']);
    });
  });

  test('a server that hangs on tools/call: those probes time out, the rest run, exit 1', async () => {
    await withServer({ versions: [LEGACY], hang: 'tools/call' }, async (s) => {
      const r = await check(s.url, { probeTimeoutMs: 300 });
      assert.deepEqual(notPassing(r), { 'unknown-tool': 'timeout', 'tool-argument-type': 'timeout', 'tool-argument-missing': 'timeout' });
      assert.equal(r.exitCode, 1);
      assert.equal(r.summary.timeout, 3);
    });
  });

  test('the overall deadline: the probe in flight times out, the rest are skipped', async () => {
    await withServer({ versions: [LEGACY], hang: 'tools/call' }, async (s) => {
      const started = Date.now();
      const r = await check(s.url, { probeTimeoutMs: 5000, timeoutMs: 800 });
      assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
      assert.equal(verdicts(r)['unknown-tool'], 'timeout');
      const after = r.probes.slice(r.probes.findIndex((p) => p.probe === 'unknown-tool') + 1);
      assert.ok(after.length > 0 && after.every((p) => p.verdict === 'skip' && /deadline/.test(p.got)));
    });
  });

  test('a redirect is reported, not followed: exit 2', async () => {
    const raw = await startRawServer((_req, res) => void res.writeHead(307, { location: 'http://127.0.0.1:1/elsewhere' }).end());
    try {
      const r = await check(new URL('/mcp', raw.url));
      assert.deepEqual([r.exitCode, r.reach.status], [2, 'unreachable']);
      assert.match(r.reach.detail!, /redirected to http:\/\/127\.0\.0\.1:1\/elsewhere \(not followed/);
      assert.equal(raw.requests.length, 1);
    } finally {
      await raw.close();
    }
  });

  test('nothing listening: exit 2', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = probe.address() as { port: number };
        probe.close(() => resolve(p));
      });
    });
    const r = await check(new URL(`http://127.0.0.1:${port}/mcp`));
    assert.deepEqual([r.exitCode, r.reach.status], [2, 'unreachable']);
    assert.match(r.reach.detail!, /ECONNREFUSED/);
  });

  test('an answer larger than --max-bytes is cut there, and judged', async () => {
    const raw = await startRawServer(
      (_req, res) =>
        void res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(`{"jsonrpc":"2.0","id":1,"result":{"pad":"${'x'.repeat(1_000_000)}"}}`),
    );
    try {
      const r = await check(new URL('/mcp', raw.url), { maxBytes: 4096 });
      assert.equal(r.exitCode, 1);
      assert.deepEqual(verdicts(r), {
        discover: 'fail',
        initialize: 'fail',
        ...Object.fromEntries(r.probes.slice(2).map((p) => [p.probe, 'skip'])),
      });
    } finally {
      await raw.close();
    }
  });
});
