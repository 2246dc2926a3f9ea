// Rules by transport (src/rules/engine.ts RuleEngine, src/rules/wires.ts): a rule that names its
// transports is never run on a subject of another wire; a subject without a wire is Streamable
// HTTP. Then the two stdio line rules (src/rules/stdio.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { decodeJson } from '../../src/codec/json-body.ts';
import { RULES } from '../../src/rules/index.ts';
import { RuleEngine } from '../../src/rules/engine.ts';
import type { BodyProblem, LineSubject, PostSubject, Rule, Subject, Wire } from '../../src/rules/types.ts';
import { ALL } from '../../src/rules/versions.ts';
import { STDIO, STREAM_ANSWERED, STREAMABLE_HTTP } from '../../src/rules/wires.ts';
import { errorMsg, MODERN, session, subject } from '../helpers/subject.ts';

const WIRES: readonly Wire[] = ['streamable-http', 'sse', 'stdio'];
const LEGACY_STREAMABLE = '2025-06-18';
const noError = (id: string, err: unknown) => assert.fail(`rule ${id} threw: ${String(err)}`);
const engine = new RuleEngine(RULES, noError);

/** Whether `rule` may judge traffic on `wire` (a subject without one is Streamable HTTP). */
const allowed = (rule: Pick<Rule, 'transports'>, wire: Wire | undefined): boolean =>
  rule.transports === undefined || rule.transports.includes(wire ?? 'streamable-http');

const ruleById = new Map(RULES.map((r) => [r.id, r]));
const ids = (findings: ReadonlyArray<{ rule: string }>) => findings.map((f) => f.rule);

/** A client POST of `messages` and the server's reply, as the POST rules see it. */
function post(
  messages: unknown,
  o: {
    wire?: Wire;
    version?: string;
    headers?: IncomingHttpHeaders;
    status?: number;
    contentType?: string;
    reply?: unknown;
    responseHeaders?: IncomingHttpHeaders;
  } = {},
): PostSubject {
  const reply = o.reply === undefined ? undefined : Buffer.from(JSON.stringify(o.reply));
  return {
    kind: 'post',
    ...(o.wire ? { wire: o.wire } : {}),
    version: o.version ?? LEGACY_STREAMABLE,
    requestHeaders: o.headers ?? {},
    request: decodeJson(Buffer.from(JSON.stringify(messages))),
    status: o.status,
    contentType: o.contentType,
    responseHeaders: o.responseHeaders,
    response: reply ? decodeJson(reply) : undefined,
    responseBytes: reply?.length ?? 0,
    session: session({ protocolVersion: o.version ?? LEGACY_STREAMABLE }),
  };
}

const line = (lines: number, problem: BodyProblem['problem'] | undefined, wire: Wire = 'stdio'): LineSubject =>
  ({
    kind: 'line',
    wire,
    version: undefined,
    lines,
    problem: problem ? { problem, excerpt: 'Server started' } : undefined,
    session: session(),
  }) as LineSubject;

const CALL = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: {} } };

describe('rules that name their transports', () => {
  test('the Streamable HTTP rules and the stdio rules name theirs', () => {
    const named = RULES.filter((r) => r.transports !== undefined);
    const by = (wires: readonly Wire[]) =>
      named
        .filter((r) => r.transports === wires)
        .map((r) => r.id)
        .sort();
    assert.deepEqual(by(STDIO), ['stdio-embedded-newline', 'stdio-not-a-message'], 'stdio line rules');
    for (const id of [
      'notification-answered-with-body',
      'response-content-type',
      'accept-header',
      'legacy-version-header',
      'session-id-invalid',
      'session-id-minted',
      'client-response-not-allowed',
      'cancelled-over-http',
      'unknown-method-status',
      'error-status-pairing',
      'method-not-found-on-404',
      'header-mismatch',
    ])
      assert.deepEqual(ruleById.get(id)?.transports, STREAMABLE_HTTP, id);
    assert.deepEqual(by(STREAM_ANSWERED), ['malformed-unanswered'], 'answers owed on the session stream');
    assert.equal(named.length, 15, named.map((r) => r.id).join(', '));
  });

  test('every rule with transports: never run on a subject of another wire, run on its own (spied checks)', () => {
    const calls: Array<{ id: string; wire: Wire | undefined }> = [];
    let current: Wire | undefined;
    const spied = RULES.map(
      (r) =>
        ({
          ...r,
          check: () => {
            calls.push({ id: r.id, wire: current });
            return [{ message: 'spied', pointer: '', evidence: '', fix: '' }];
          },
        }) as Rule,
    );
    const spyEngine = new RuleEngine(spied, noError);
    const subjects = (wire: Wire | undefined, version: string | undefined): Subject[] => {
      const w = wire ? { wire } : {};
      return [
        { ...subject({ version }), ...w },
        { ...post(CALL, { version: version ?? LEGACY_STREAMABLE, status: 200 }), version, ...w },
        { ...line(1, 'not-json'), wire: wire ?? 'stdio' } as Subject,
      ];
    };
    const ran = new Set<string>();
    for (const wire of [undefined, ...WIRES]) {
      current = wire;
      for (const version of [undefined, ...ALL])
        for (const party of [undefined, 'client', 'server'] as const)
          for (const s of subjects(wire, version)) {
            const before = calls.length;
            const findings = spyEngine.evaluate(s, party);
            assert.equal(findings.length, calls.length - before, 'one finding per rule run');
            for (const f of findings) {
              const rule = ruleById.get(f.rule)!;
              const w = s.wire;
              assert.ok(allowed(rule, w), `${f.rule} (transports ${rule.transports?.join('/')}) ran on ${w ?? 'no wire'}`);
              if (rule.transports) ran.add(`${f.rule} ${w ?? 'streamable-http'}`);
            }
          }
    }
    // Each of them did run on its own wire: the assertion above had something to judge.
    for (const r of RULES.filter((r) => r.transports))
      for (const w of r.transports!) assert.ok(ran.has(`${r.id} ${w}`), `${r.id} never ran on ${w}`);
  });
});

describe('Streamable HTTP rules: fire over Streamable HTTP, silent over sse and stdio', () => {
  const over = (s: Subject, wire: Wire | undefined): Subject => {
    const { wire: _omit, ...rest } = s as Subject & { wire?: Wire };
    return (wire ? { ...rest, wire } : rest) as Subject;
  };
  const cases: Array<{ rule: string; subject: Subject; party: 'client' | 'server' }> = [
    {
      rule: 'accept-header',
      party: 'client',
      subject: post(CALL, { headers: { accept: 'application/json' } }),
    },
    {
      rule: 'response-content-type',
      party: 'server',
      subject: post(CALL, { status: 200, contentType: 'text/plain', reply: { jsonrpc: '2.0', id: 1, result: { content: [] } } }),
    },
    {
      rule: 'notification-answered-with-body',
      party: 'server',
      subject: post(
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { status: 200, contentType: 'application/json', reply: { ok: true } },
      ),
    },
    {
      rule: 'header-mismatch',
      party: 'client',
      subject: subject({ version: MODERN }),
    },
  ];

  for (const c of cases) {
    test(c.rule, () => {
      for (const wire of [undefined, 'streamable-http'] as const)
        assert.ok(ids(engine.evaluate(over(c.subject, wire), c.party)).includes(c.rule), `${c.rule} fires on ${wire ?? 'no wire'}`);
      for (const wire of ['sse', 'stdio'] as const) {
        const found = ids(engine.evaluate(over(c.subject, wire), c.party));
        assert.ok(!found.includes(c.rule), `${c.rule} on ${wire}: ${found.join(', ')}`);
        for (const id of found) assert.ok(allowed(ruleById.get(id)!, wire), `${id} on ${wire}`);
      }
    });
  }

  test('a rule without transports still judges stdio and sse: missing-request-meta on a 2026-07-28 request', () => {
    for (const wire of WIRES)
      assert.ok(
        ids(engine.evaluate({ ...subject({ version: MODERN, noMeta: true }), wire }, 'client')).includes('missing-request-meta'),
        wire,
      );
  });

  test('rules that read the answer, not HTTP, judge a stdio answer (no HTTP status there)', () => {
    const ping = { ...subject({ version: LEGACY_STREAMABLE, method: 'ping', response: errorMsg(-32603, 'no') }), status: undefined };
    const unknownVersion = subject({ version: MODERN, response: errorMsg(-32603, 'no') });
    unknownVersion.request.protocolVersion = '2027-01-01';
    for (const [s, rule] of [
      [ping, 'ping-result'],
      [unknownVersion, 'unsupported-version-code'],
    ] as const) {
      assert.ok(ids(engine.evaluate({ ...s, status: 200 }, 'server')).includes(rule), `${rule} over HTTP`);
      const stdio = { ...s, wire: 'stdio', status: undefined, contentType: undefined, transport: 'stdio' } as const;
      assert.ok(ids(engine.evaluate(stdio, 'server')).includes(rule), `${rule} over stdio`);
    }
  });
});

describe('stdio line rules', () => {
  const lineIds = (s: LineSubject) => ids(engine.evaluate(s, 'server'));

  test('stdio-not-a-message: a line with a problem (a log line, a banner, a blank line) on one line', () => {
    for (const problem of ['not-json', 'empty', 'not-jsonrpc', 'html', 'not-utf8'] as const) {
      const findings = engine.evaluate(line(1, problem), 'server');
      assert.deepEqual(ids(findings), ['stdio-not-a-message'], problem);
      assert.equal(findings[0]!.evidence, 'Server started');
    }
    assert.match(engine.evaluate(line(1, 'empty'), 'server')[0]!.message, /a blank line/);
  });

  test('stdio-embedded-newline: a message over several lines', () => {
    assert.deepEqual(lineIds(line(2, undefined)), ['stdio-embedded-newline']);
    const [f] = engine.evaluate(line(7, undefined), 'server');
    assert.equal(f?.evidence, '7 lines');
  });

  test('a good line (one line, no problem): silent', () => {
    assert.deepEqual(lineIds(line(1, undefined)), []);
  });

  test('the client party has no line rules', () => {
    assert.deepEqual(ids(engine.evaluate(line(1, 'not-json'), 'client')), []);
  });

  test('never on a non-stdio wire', () => {
    for (const wire of ['streamable-http', 'sse'] as const) {
      assert.deepEqual(lineIds(line(1, 'not-json', wire)), [], wire);
      assert.deepEqual(lineIds(line(3, undefined, wire)), [], wire);
    }
  });

  test('JSON over several lines that is no JSON-RPC message is not a message either (and only that: it is no message to put on one line)', () => {
    assert.deepEqual(lineIds(line(3, 'not-jsonrpc')), ['stdio-not-a-message']);
  });
});
