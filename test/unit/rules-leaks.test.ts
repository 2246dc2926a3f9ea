// The leaks family, pure: every pattern on leaks it must find and look-alikes it must not, the
// rules on hand-built exchange subjects (where they look, what they report, what they never
// show), and a guard against catastrophic backtracking.
import { NO_VERDICT } from '../../src/verdicts.ts';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GROWTH, assertLinear } from '../helpers/growth.ts';
import { classify } from '../../src/codec/jsonrpc.ts';
import {
  LEAK_PATTERNS,
  LEAK_RULES,
  MAX_TEXT,
  findLeaks,
  leakRules,
  redactCredentials,
  type LeakPattern,
  type LeakRuleId,
} from '../../src/rules/leaks.ts';
import type { ExchangeRule, ExchangeSubject, Report } from '../../src/rules/types.ts';
import { ALL } from '../../src/rules/versions.ts';

const STACK = 'leaked-stack-trace';
const PATH = 'leaked-path';
const ADDR = 'leaked-private-address';
const HOST = 'leaked-internal-host';

/** [rule, text, the leaked part findLeaks must report first for that rule] */
const POSITIVE: Array<[LeakRuleId, string, string]> = [
  // Node.js
  [STACK, 'Error: boom\n    at handler (/srv/app/dist/tools.js:42:17)', 'at handler (/srv/app/dist/tools.js:42:17)'],
  [STACK, 'Error: boom\n    at /path/file.js:1:2', 'at /path/file.js:1:2'],
  [STACK, 'at async fn (file:///app/dist/x.mjs:3:4)', 'at async fn (file:///app/dist/x.mjs:3:4)'],
  [STACK, 'TypeError: x is undefined at Object.<anonymous> (/app/index.js:3:9)', 'at Object.<anonymous> (/app/index.js:3:9)'],
  [STACK, 'at new Server (C:\\src\\server.ts:10:5)', 'at new Server (C:\\src\\server.ts:10:5)'],
  [STACK, 'at EventEmitter.emit (node:events:517:28)', 'at EventEmitter.emit (node:events:517:28)'],
  [
    STACK,
    'at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
    'at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
  ],
  [STACK, 'at Foo.bar [as baz] (/a/b.ts:1:1)', 'at Foo.bar [as baz] (/a/b.ts:1:1)'],
  [STACK, '(at Object.<anonymous> (index.js:3:9))', 'at Object.<anonymous> (index.js:3:9)'],
  // Python
  [STACK, 'Traceback (most recent call last):\n  File "/x.py", line 3, in f', 'Traceback (most recent call last):'],
  [STACK, 'boom\n  File "/srv/app/main.py", line 3, in run\nValueError', 'File "/srv/app/main.py", line 3, in run'],
  [STACK, 'File "<frozen importlib._bootstrap>", line 1, in _load', 'File "<frozen importlib._bootstrap>", line 1, in _load'],
  // Java, Kotlin
  [STACK, 'java.lang.NullPointerException\n\tat com.example.Foo.bar(Foo.java:42)', 'at com.example.Foo.bar(Foo.java:42)'],
  [STACK, '\tat java.base/java.lang.Thread.run(Thread.java:833)', 'at java.base/java.lang.Thread.run(Thread.java:833)'],
  [
    STACK,
    'at kotlinx.coroutines.DispatchedTask.run(DispatchedTask.kt:108)',
    'at kotlinx.coroutines.DispatchedTask.run(DispatchedTask.kt:108)',
  ],
  [
    STACK,
    'at sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)',
    'at sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)',
  ],
  [STACK, 'Exception in thread "main" java.lang.IllegalStateException', 'Exception in thread "main"'],
  [STACK, 'failed\nCaused by: org.postgresql.util.PSQLException: timeout', 'Caused by: org.postgresql.util.PSQLException'],
  // Go
  [STACK, 'goroutine 1 [running]:\nmain.main()', 'goroutine 1 [running]:'],
  [STACK, 'main.main()\n\t/home/u/go/src/app/main.go:42 +0x1d', '/home/u/go/src/app/main.go:42 +0x1d'],
  [STACK, 'panic: runtime error: index out of range [5] with length 3', 'panic: '],
  [STACK, 'handler failed\npanic: boom', 'panic: '],
  [STACK, 'tool failed: panic: runtime error: invalid memory address', 'panic: runtime error: '],
  // Rust
  [STACK, "thread 'main' panicked at src/main.rs:2:5:\nboom", "thread 'main' panicked at "],
  // .NET
  [STACK, '   at Ns.Class.Method() in C:\\src\\File.cs:line 42', 'at Ns.Class.Method() in C:\\src\\File.cs:line 42'],
  [STACK, 'at MyApp.Svc.Run(String arg) in /src/Svc.cs:line 7', 'at MyApp.Svc.Run(String arg) in /src/Svc.cs:line 7'],
  [STACK, 'System.NullReferenceException: Object reference not set to an instance of an object.', 'System.NullReferenceException'],
  [STACK, 'Unhandled: System.IO.FileNotFoundException', 'System.IO.FileNotFoundException'],
  [STACK, '--- End of stack trace from previous location ---', '--- End of stack trace'],
  // Ruby
  [STACK, "boom\n\tfrom /app/lib/x.rb:12:in `block in <main>'", '/app/lib/x.rb:12:in'],
  [STACK, "/app/models/user.rb:7:in 'User#save': boom (RuntimeError)", '/app/models/user.rb:7:in'],
  // PHP
  [STACK, 'Stack trace:\n#0 /var/www/x.php(12): Foo->bar()', '#0 /var/www/x.php(12): '],
  [STACK, '#1 {main}', '#1 {main}'],
  [STACK, 'PHP Fatal error:  Uncaught Exception: x in /var/www/html/index.php:12', 'in /var/www/html/index.php:12'],
  [STACK, 'Warning: x in /var/www/x.php on line 12', 'in /var/www/x.php on line 12'],

  // Paths
  [PATH, "ENOENT: no such file or directory, open '/app/data/x.json'", '/app/data/x.json'],
  [PATH, 'open /home/u/x.txt failed.', '/home/u/x.txt'],
  [PATH, 'cannot read /Users/alice/project/.env', '/Users/alice/project/.env'],
  [PATH, 'config at /etc/myapp/config.yaml is invalid', '/etc/myapp/config.yaml'],
  [PATH, 'data dir (/var/lib/postgresql/data) is full', '/var/lib/postgresql/data'],
  [PATH, 'upload failed: path=/tmp/upload-123/file.bin', '/tmp/upload-123/file.bin'],
  [PATH, 'denied: /proc/self/environ', '/proc/self/environ'],
  [PATH, 'no repo at /workspace/repo/src', '/workspace/repo/src'],
  [PATH, 'in "/root/.ssh/id_rsa"', '/root/.ssh/id_rsa'],
  [PATH, '/srv/x /opt/y/z /mnt/a/b /code/q/r /usr/local/lib', '/srv/x'],
  [PATH, 'see /build/out/server.js:4', '/build/out/server.js:4'],
  [PATH, 'loading /lib/native/addon.so failed', '/lib/native/addon.so'],
  [PATH, 'C:\\Program Files\\App\\x.dll was missing', 'C:\\Program Files\\App\\x.dll'],
  [PATH, 'open C:\\Users\\bob\\secrets.txt', 'C:\\Users\\bob\\secrets.txt'],
  [PATH, 'open C:/Users/bob/a.txt', 'C:/Users/bob/a.txt'],
  [PATH, 'share \\\\fileserver\\share\\dir\\f.txt offline', '\\\\fileserver\\share\\dir\\f.txt'],
  [PATH, '"C:\\\\Users\\\\bob\\\\x.txt"', 'C:\\\\Users\\\\bob\\\\x.txt'],

  // Private addresses
  [ADDR, 'connect ECONNREFUSED 10.0.0.5:5432', '10.0.0.5:5432'],
  [ADDR, '172.16.0.1 and 172.31.255.255', '172.16.0.1'],
  [ADDR, 'reach 192.168.1.1.', '192.168.1.1'],
  [ADDR, 'metadata 169.254.169.254 timed out', '169.254.169.254'],
  [ADDR, 'cgnat 100.64.0.1', '100.64.0.1'],
  [ADDR, 'cgnat 100.127.255.255', '100.127.255.255'],
  [ADDR, 'GET http://10.1.2.3/x failed', '10.1.2.3'],
  [ADDR, 'ssh user@192.168.0.10', '192.168.0.10'],
  [ADDR, 'host fd12:3456:789a::1 down', 'fd12:3456:789a::1'],
  [ADDR, 'route fe80::1%eth0', 'fe80::1%eth0'],
  [ADDR, 'ula FD00::1', 'FD00::1'],
  [ADDR, 'mapped ::ffff:10.0.0.1', '10.0.0.1'],
  [ADDR, 'full fd00:1:2:3:4:5:6:7', 'fd00:1:2:3:4:5:6:7'],

  // Internal hosts, connection strings
  [HOST, 'getaddrinfo ENOTFOUND db.internal', 'db.internal'],
  [HOST, 'docker at host.docker.internal:2375', 'host.docker.internal:2375'],
  [HOST, 'printer.local is offline', 'printer.local'],
  [HOST, 'redis-master.default.svc.cluster.local:6379 refused', 'redis-master.default.svc.cluster.local:6379'],
  [HOST, 'nas.localdomain', 'nas.localdomain'],
  [HOST, 'build.corp; router.lan; wiki.intranet', 'build.corp'],
  [HOST, 'router.lan', 'router.lan'],
  [HOST, 'wiki.intranet down', 'wiki.intranet'],
  [HOST, 'nas.home.arpa', 'nas.home.arpa'],
  [HOST, 'could not connect to postgres://user@db-primary:5432/app', 'postgres://user@db-primary:5432/app'],
  [HOST, 'redis://cache:6379.', 'redis://cache:6379'],
  [HOST, '(mongodb+srv://cluster0.x.mongodb.net/db)', 'mongodb+srv://cluster0.x.mongodb.net/db'],
  [HOST, 'jdbc:mysql://db:3306/app', 'jdbc:mysql://db:3306/app'],
  [HOST, 'amqp://rabbit:5672 closed', 'amqp://rabbit:5672'],
  [HOST, 'Server=db1;Database=app;User ID=sa;Pwd=x', 'Server=db1;Database=app;User ID=sa;Pwd=x'],
];

/** [rule, text that must not be reported for that rule] */
const NEGATIVE: Array<[LeakRuleId, string]> = [
  [STACK, 'Tool echo not found'],
  [STACK, 'MCP error -32602: Invalid arguments for tool echo: [{"path":["text"],"message":"Required"}]'],
  [STACK, 'the meeting at 10:30:45 moved'],
  [STACK, 'log at 10/Oct/2000:13:55:36'],
  [STACK, 'look at the file (notes.txt)'],
  [STACK, 'syntax error at config.yaml:3:5'],
  [STACK, 'look at example.com:80:1'],
  [STACK, "Don't panic: it is fine"],
  [STACK, 'File "data.csv", line 3: invalid number'],
  [STACK, 'at least 3 items are required'],
  [STACK, 'Traceback disabled'],
  [STACK, 'System.out is closed'],
  [STACK, 'Caused by: user input'],
  [STACK, 'goroutine leak detected'],
  [STACK, 'at com.example (see docs)'],
  [STACK, 'Error at line 3:5 of your query'],
  [STACK, 'thread main panicked'],
  [PATH, 'see https://example.com/home/user/x.js'],
  [PATH, 'GET /mcp failed'],
  [PATH, 'POST /api/v1/users returned 500'],
  [PATH, 'file:///home/u/notes.txt not found'],
  [PATH, 'file:/home/u/x unreadable'],
  [PATH, 'expected application/json or text/event-stream'],
  [PATH, 'date 12/05/2024'],
  [PATH, 'and/or'],
  [PATH, 'directory /home is empty'],
  [PATH, 'relative src/index.ts is fine'],
  [PATH, 'route /static/app has no file'],
  [PATH, 'ratio 3/4'],
  [PATH, 'a/b/c.txt'],
  [PATH, '/homework/x is not a root'],
  [ADDR, 'node v10.0.0.1'],
  [ADDR, 'release 10.2.3.4-beta'],
  [ADDR, 'pkg 1.10.0.0.1'],
  [ADDR, 'bad 10.0.0.256'],
  [ADDR, 'version 10.0.0.1'],
  [ADDR, 'Version: 10.0.0.1'],
  [ADDR, 'public 172.32.0.1'],
  [ADDR, 'public 8.8.8.8'],
  [ADDR, 'public 100.128.0.1'],
  [ADDR, 'public 192.169.0.1'],
  [ADDR, 'std::1'],
  [ADDR, 'at 12:34:56'],
  [ADDR, 'three parts 10.0.0'],
  [ADDR, 'five parts 10.0.0.1.5'],
  [ADDR, 'node 20.10.0'],
  [ADDR, 'not an address fd00:1'],
  [ADDR, 'abc10.0.0.1'],
  [ADDR, 'doc range 2001:db8::1'],
  [ADDR, 'octal 010.0.0.1'],
  [HOST, 'db.internal.example.com is down'],
  [HOST, 'read settings.local.json'],
  [HOST, 'missing .env.local'],
  [HOST, 'localhost refused'],
  // Loopback names the server's own machine, no network (issue 43): no address, no host.
  [ADDR, 'listening on 127.0.0.1'],
  [ADDR, 'dial tcp 127.0.0.1:6443: connect: connection refused'],
  [ADDR, 'loopback 127.1.2.3'],
  [ADDR, 'dial [::1]:8080'],
  [HOST, 'connect localhost:3000 refused'],
  [HOST, 'GET http://LOCALHOST:8080/x'],
  [HOST, 'app.localhost down'],
  [HOST, 'example.com is down'],
  [HOST, 'internal error'],
  [HOST, 'local variable x'],
  [HOST, 'io.netty.util.internal.PlatformDependent'],
  [HOST, 'node:internal/process'],
  [HOST, 'https://api.example.com/v1'],
  [HOST, 'postgresql is down'],
  [HOST, 'pip._internal.cli'],
  [HOST, 'Host=example.com; Path=/'],
];

const only = (rule: LeakRuleId): readonly LeakPattern[] => LEAK_PATTERNS.filter((p) => p.rule === rule);

describe('findLeaks: patterns', () => {
  for (const [rule, text, match] of POSITIVE) {
    test(`${rule} finds ${JSON.stringify(match)} in ${JSON.stringify(text).slice(0, 70)}`, () => {
      const [first] = findLeaks(text, { patterns: only(rule) });
      assert.ok(first, `nothing found in ${JSON.stringify(text)}`);
      assert.equal(first.rule, rule);
      assert.equal(first.match, match);
      assert.equal(text.slice(first.index, first.index + first.length), match);
    });
  }
  for (const [rule, text] of NEGATIVE) {
    test(`${rule} ignores ${JSON.stringify(text)}`, () => {
      assert.deepEqual(
        findLeaks(text, { patterns: only(rule) }).map((l) => l.match),
        [],
      );
    });
  }

  test('results are ordered by position, cover every rule, and carry pattern and label', () => {
    const text = 'at f (/app/x.js:1:2) from 10.0.0.1 via db.internal';
    const leaks = findLeaks(text);
    assert.deepEqual(
      leaks.map((l) => [l.rule, l.match]),
      [
        [STACK, 'at f (/app/x.js:1:2)'],
        [PATH, '/app/x.js:1:2'],
        [PATH, '/app/x.js:1:2'],
        [ADDR, '10.0.0.1'],
        [HOST, 'db.internal'],
      ],
    );
    assert.ok(leaks.every((l) => l.pattern.length > 0 && l.label.length > 0));
    assert.ok(leaks.every((l, i) => i === 0 || leaks[i - 1]!.index <= l.index));
  });

  test('every match is reported, not only the first', () => {
    assert.equal(findLeaks('10.0.0.1 10.0.0.2 10.0.0.3', { patterns: only(ADDR) }).length, 3);
  });

  test('sent: what the client sent itself is not a leak, and nor is a path under a path it sent', () => {
    const sent = ['/home/u/notes.txt', 'file:///srv/docs/a.md', 'http://10.0.0.5/', '/home/u/project', 'printer.local'];
    assert.deepEqual(findLeaks("ENOENT: open '/home/u/notes.txt'", { sent }), []);
    assert.deepEqual(findLeaks('not found: /srv/docs/a.md', { sent }), []);
    assert.deepEqual(findLeaks('connect ECONNREFUSED 10.0.0.5:80', { sent }), []);
    assert.deepEqual(findLeaks('no such file /home/u/project/sub/x.txt', { sent }), []);
    assert.deepEqual(findLeaks('printer.local:631 is offline', { sent }), []);
    assert.deepEqual(
      findLeaks('bad /home/u/projectX/y', { sent }).map((l) => l.match),
      ['/home/u/projectX/y'],
    );
    assert.deepEqual(
      findLeaks('connect 10.0.0.6:80', { sent }).map((l) => l.match),
      ['10.0.0.6:80'],
    );
  });

  test('a policy can add a pattern (with or without the g flag)', () => {
    const custom: LeakPattern = { rule: HOST, name: 'consul', label: 'a Consul service name', re: /\b[\w-]+\.service\.consul\b/ };
    const leaks = findLeaks('api.service.consul and api.service.consul', { patterns: [...LEAK_PATTERNS, custom] });
    assert.deepEqual(
      leaks.map((l) => l.pattern),
      ['consul', 'consul'],
    );
    const rule = leakRules([...LEAK_PATTERNS, custom]).find((r) => r.id === HOST)!;
    assert.equal(rule.check(subject(error('upstream api.service.consul down'))).length, 1);
  });

  test('the pattern list: known rules, unique kebab-case names, global regexes', () => {
    const rules = new Set<string>([STACK, PATH, ADDR, HOST]);
    for (const p of LEAK_PATTERNS) {
      assert.ok(rules.has(p.rule), p.name);
      assert.match(p.name, /^[a-z0-9]+(-[a-z0-9]+)*$/);
      assert.ok(p.re.global, p.name);
    }
    assert.equal(new Set(LEAK_PATTERNS.map((p) => p.name)).size, LEAK_PATTERNS.length);
    for (const rule of rules)
      assert.ok(
        LEAK_PATTERNS.some((p) => p.rule === rule),
        rule,
      );
  });

  test('never throws, whatever the text', () => {
    for (const text of ['', '\u0000', '\ud800', 'x'.repeat(70_000), '🙂 /home/🙂/x', '\n'.repeat(1000)])
      assert.ok(Array.isArray(findLeaks(text)));
  });
});

describe('redactCredentials', () => {
  const cases: Array<[string, string]> = [
    ['postgres://user:s3cr3t@db:5432/app', 'postgres://user:[REDACTED]@db:5432/app'],
    ['postgres://admin:p@ss@db:5432/x', 'postgres://admin:[REDACTED]@db:5432/x'],
    ['redis://:pw@cache:6379', 'redis://:[REDACTED]@cache:6379'],
    ['mongodb://u:pw@h1,h2/db?x=1', 'mongodb://u:[REDACTED]@h1,h2/db?x=1'],
    ['jdbc:oracle:thin:scott/tiger@//h:1521/svc', 'jdbc:oracle:thin:scott/[REDACTED]@//h:1521/svc'],
    ['Server=a;Pwd=x;Password=y', 'Server=a;Pwd=[REDACTED];Password=[REDACTED]'],
    ['jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc at 10:30', 'jwt [REDACTED] at 10:30'],
    ['Authorization: Bearer abc.def-123', 'Authorization: Bearer [REDACTED]'],
    ['redis://cache:6379', 'redis://cache:6379'],
    ['see https://example.com/a@b', 'see https://example.com/a@b'],
  ];
  for (const [text, want] of cases) test(JSON.stringify(text), () => assert.equal(redactCredentials(text), want));
});

// Subjects.
type Json = Record<string, unknown>;
const error = (message: unknown, data?: unknown): Json => ({
  jsonrpc: '2.0',
  id: 1,
  error: { code: -32603, message, ...(data === undefined ? {} : { data }) },
});
const toolError = (...texts: unknown[]): Json => ({
  jsonrpc: '2.0',
  id: 1,
  result: { content: texts.map((t) => (typeof t === 'string' ? { type: 'text', text: t } : t)), isError: true },
});
const ok = (text: string): Json => ({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text }] } });

function subject(
  response: Json | undefined,
  opts: { params?: unknown; method?: string; from?: 'client' | 'server'; version?: string } = {},
): ExchangeSubject {
  const method = opts.method ?? 'tools/call';
  const version = opts.version ?? '2025-06-18';
  return {
    kind: 'exchange',
    version,
    request: {
      scope: 's',
      from: opts.from ?? 'client',
      id: 1,
      method,
      tool: method === 'tools/call' ? 'echo' : undefined,
      params: opts.params ?? { name: 'echo', arguments: { text: 'hi' } },
      sessionId: undefined,
      protocolVersion: version,
      startedAt: 0,
      requestBytes: 0,
      headers: {},
      verdict: NO_VERDICT,
    },
    requestHeaders: {},
    response: response === undefined ? undefined : classify(response),
    outcome: 'error',
    status: 200,
    contentType: 'application/json',
    transport: 'json',
    proxyError: undefined,
    bodyProblem: undefined,
    unmatched: [],
    session: {
      key: 'k',
      sessionId: undefined,
      protocolVersion: version,
      era: 'legacy',
      serverCapabilities: undefined,
      clientCapabilities: undefined,
      tools: new Map(),
      toolsComplete: false,
      toolsFromFirstPage: false,
    },
  };
}

const rule = (id: LeakRuleId): ExchangeRule => {
  const found = LEAK_RULES.find((r) => r.id === id);
  assert.ok(found && found.subject === 'exchange', id);
  return found;
};
const check = (id: LeakRuleId, s: ExchangeSubject): Report[] => rule(id).check(s);

describe('leak rules', () => {
  test('metadata: ids, group, severity, every version, server, spec source', () => {
    assert.deepEqual(
      LEAK_RULES.map((r) => [r.id, r.severity]),
      [
        [STACK, 'error'],
        [PATH, 'warning'],
        [ADDR, 'warning'],
        [HOST, 'warning'],
      ],
    );
    for (const r of LEAK_RULES) {
      assert.equal(r.group, 'leaks');
      assert.deepEqual(r.versions, ALL);
      assert.equal(r.party, 'server');
      assert.equal(r.subject, 'exchange');
      assert.equal(r.source, 'https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/logging#security');
      assert.ok(r.summary.length > 10 && !r.summary.includes('\n'));
    }
  });

  const where: Array<[string, (text: string) => Json, string]> = [
    ['error.message', (t) => error(t), '/response/error/message'],
    ['error.data (a string)', (t) => error('Internal error', t), '/response/error/data'],
    ['error.data (nested)', (t) => error('Internal error', { details: { trace: ['ok', t] } }), '/response/error/data/details/trace/1'],
    ['isError text', (t) => toolError('first block is fine', t), '/response/result/content/1/text'],
  ];
  const leaks: Array<[LeakRuleId, string, string]> = [
    [STACK, 'Error: boom\n    at handler (/srv/app/dist/tools.js:42:17)', 'at handler (/srv/app/dist/tools.js:42:17)'],
    [PATH, "ENOENT: no such file or directory, open '/home/deploy/app/config.json'", '/home/deploy/app/config.json'],
    [ADDR, 'connect ECONNREFUSED 10.0.3.7:5432', '10.0.3.7:5432'],
    [HOST, 'getaddrinfo ENOTFOUND db-primary.internal', 'db-primary.internal'],
  ];
  for (const [id, text, part] of leaks) {
    for (const [name, build, ptr] of where) {
      test(`${id} fires in ${name}`, () => {
        const reports = check(id, subject(build(text)));
        assert.equal(reports.length, 1);
        const [r] = reports;
        assert.equal(r!.pointer, ptr);
        assert.ok(r!.evidence.includes(part.replace(/\s+/g, ' ')), r!.evidence);
        assert.ok(r!.evidence.length <= 160);
        assert.match(r!.message, /^tools\/call \(echo\): (error\.message|error\.data|isError result text) contains /);
        assert.ok(!r!.message.includes('\n') && r!.fix.length > 20);
      });
    }
    test(`${id} stays silent on a clean error, a clean isError result and a normal result that mentions the same thing`, () => {
      assert.deepEqual(check(id, subject(error('Unknown tool: nope'))), []);
      assert.deepEqual(check(id, subject(error('Invalid params', { field: 'text', reason: 'must not be empty' }))), []);
      assert.deepEqual(check(id, subject(toolError('The text must not be empty'))), []);
      // A successful result's content is the tool's subject matter: log lines, a search hit.
      assert.deepEqual(check(id, subject(ok(`2025-01-12T10:00:02Z ERROR ${text}`))), []);
      assert.deepEqual(check(id, subject(ok(`1 match in app.log:\n${text}`))), []);
      assert.deepEqual(
        check(id, subject({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: `Found:\n${text}` }], isError: false } })),
        [],
      );
    });
    test(`${id} fires on a result silent-success judges a failure (it states the call failed without isError)`, () => {
      const reports = check(id, subject(ok(`Report failed: ${text}`)));
      assert.equal(reports.length, 1);
      assert.equal(reports[0]!.pointer, '/response/result/content/0/text');
      assert.match(reports[0]!.message, /failure result text contains/);
    });
  }

  test('an isError result: embedded resource text and structuredContent strings are failure text too', () => {
    const resp = {
      jsonrpc: '2.0',
      id: 1,
      result: {
        content: [
          { type: 'text', text: 'Export failed' },
          { type: 'resource', resource: { uri: 'mem://log', text: 'cannot write /var/lib/export/out.csv' } },
        ],
        structuredContent: { error: { at: '10.0.3.17:5432' } },
        isError: true,
      },
    } as Json;
    assert.equal(check(PATH, subject(resp))[0]?.pointer, '/response/result/content/1/resource/text');
    assert.equal(check(ADDR, subject(resp))[0]?.pointer, '/response/result/structuredContent/error/at');
    // The same places of a successful result are subject matter.
    const fine = {
      jsonrpc: '2.0',
      id: 1,
      result: { ...(resp as { result: Record<string, unknown> }).result, content: [{ type: 'text', text: 'Exported' }], isError: false },
    } as Json;
    assert.deepEqual(check(ADDR, subject(fine)), []);
  });

  test('one finding per rule per response: the first match, message before data', () => {
    const resp = error('at a (/app/a.js:1:2)\n    at b (/app/b.js:3:4)', { stack: 'at c (/app/c.js:5:6)' });
    const reports = check(STACK, subject(resp));
    assert.equal(reports.length, 1);
    assert.equal(reports[0]!.pointer, '/response/error/message');
    assert.match(reports[0]!.evidence, /^at a \(\/app\/a\.js:1:2\)/);
    const data = check(PATH, subject(error('Internal error', { a: 'fine', b: { c: '/home/x/1', d: '/home/x/2' } })));
    assert.deepEqual(
      data.map((r) => r.pointer),
      ['/response/error/data/b/c'],
    );
  });

  test('data keys are escaped in the pointer', () => {
    const [r] = check(PATH, subject(error('x', { 'a/b': { '~k': '/etc/app/x.conf' } })));
    assert.equal(r?.pointer, '/response/error/data/a~1b/~0k');
  });

  test('a connection string password never reaches message or evidence', () => {
    for (const resp of [
      error('could not connect to postgres://admin:hunter2@db-primary:5432/app'),
      error('Internal error', { cause: 'ECONNREFUSED', dsn: 'mongodb://root:hunter2@mongo.internal:27017/app?authSource=admin' }),
      toolError('Server=db1.corp;Database=app;User ID=sa;Password=hunter2;'),
      toolError('Server=db1.corp;Database=app;User ID=sa;Pwd=hunter2'),
      error('jdbc:oracle:thin:scott/hunter2@db.internal:1521:orcl refused'),
      error('redis://:hunter2@cache.lan:6379 refused, token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl at 10.0.0.1'),
    ]) {
      const all = LEAK_RULES.flatMap((r) => (r.subject === 'exchange' ? r.check(subject(resp)) : []));
      assert.ok(
        all.some((r) => r.evidence.includes('[REDACTED]')),
        JSON.stringify(all),
      );
      for (const r of all) {
        assert.ok(!`${r.message} ${r.evidence} ${r.fix}`.includes('hunter2'), r.evidence);
        assert.ok(!r.evidence.includes('c2lnbmF0dXJl'), r.evidence);
      }
    }
    const [r] = check(HOST, subject(error('could not connect to postgres://admin:hunter2@db-primary:5432/app')));
    assert.match(r!.evidence, /postgres:\/\/admin:\[REDACTED\]@db-primary:5432\/app/);
  });

  test("what the client sent is not judged a leak (the request's params)", () => {
    const read = { method: 'resources/read', params: { uri: 'file:///home/u/notes.txt' } };
    assert.deepEqual(check(PATH, subject(error('Resource not found: /home/u/notes.txt'), read)), []);
    const args = { params: { name: 'fetch', arguments: { url: 'http://10.0.0.5:8080/status', dsn: 'postgres://u:pw@db.internal/x' } } };
    assert.deepEqual(check(ADDR, subject(error('connect ECONNREFUSED 10.0.0.5:8080'), args)), []);
    assert.deepEqual(check(HOST, subject(error('bad dsn postgres://u:pw@db.internal/x'), args)), []);
    assert.equal(check(ADDR, subject(error('connect ECONNREFUSED 10.0.0.6:8080'), args)).length, 1);
    // Even a stack frame is the client's own words when it sent it (a log to analyse, say).
    const frame = 'at f (/app/x.js:1:2)';
    assert.equal(check(STACK, subject(error(`parse failed: ${frame}`), { params: { name: 'x', arguments: { text: frame } } })).length, 0);
  });

  test('the method (and tool) is named; other methods too', () => {
    const [r] = check(PATH, subject(error('/etc/app/prompts.yaml unreadable'), { method: 'prompts/get', params: { name: 'p' } }));
    assert.match(r!.message, /^prompts\/get: error\.message contains an absolute file path$/);
  });

  test('silent on what is not a server error answering a client', () => {
    const text = 'at f (/app/x.js:1:2) 10.0.0.1 db.internal';
    for (const r of LEAK_RULES) {
      if (r.subject !== 'exchange') continue;
      assert.deepEqual(r.check(subject(error(text), { from: 'server', method: 'sampling/createMessage' })), [], r.id);
      assert.deepEqual(r.check(subject(undefined)), [], r.id);
      assert.deepEqual(r.check(subject(ok(text))), [], r.id);
      assert.deepEqual(
        r.check(subject({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'error', data: text } })),
        [],
        r.id,
      );
    }
  });

  test('at most MAX_TEXT characters are examined per response', () => {
    const pad = 'x'.repeat(MAX_TEXT - 100);
    assert.equal(check(ADDR, subject(error(`${pad} 10.0.0.1`))).length, 1);
    assert.deepEqual(check(ADDR, subject(error(`${pad}${'y'.repeat(200)} 10.0.0.1`))), []);
    assert.deepEqual(check(ADDR, subject(error(pad + 'y'.repeat(200), { ip: '10.0.0.1' }))), []);
    assert.deepEqual(check(ADDR, subject(toolError(pad + 'y'.repeat(200), '10.0.0.1'))), []);
    assert.equal(check(ADDR, subject(error('short', { a: pad, ip: '10.0.0.1' }))).length, 1);
  });

  test('never throws on odd shapes, deep or huge data', () => {
    let deep: unknown = 'at f (/app/x.js:1:2)';
    for (let i = 0; i < 100_000; i++) deep = { d: deep };
    const circular: Record<string, unknown> = { s: '/home/u/x' };
    circular.self = circular;
    const odd: Json[] = [
      error(42),
      error(null, null),
      error({ text: '/home/u/x' }),
      error('x', deep),
      error('x', circular),
      error('x', new Array(1_000_000).fill(1)),
      { jsonrpc: '2.0', id: 1, error: 'at f (/app/x.js:1:2)' },
      { jsonrpc: '2.0', id: 1, result: { isError: true, content: 'at f (/app/x.js:1:2)' } },
      { jsonrpc: '2.0', id: 1, result: { isError: true, content: [null, 7, { type: 'text' }, { type: 'image', data: '/home/u/x' }] } },
      { jsonrpc: '2.0', id: 1, result: { isError: true } },
      { jsonrpc: '2.0', id: 1, result: null },
    ];
    for (const resp of odd) {
      for (const r of LEAK_RULES) if (r.subject === 'exchange') assert.ok(Array.isArray(r.check(subject(resp))));
    }
    assert.equal(check(PATH, subject(error('x', circular))).length, 1);
    assert.deepEqual(check(STACK, subject(error('x', deep))), []); // deeper than the walk goes
  });
});

describe('linear time', () => {
  // Adversarial input per pattern family, `n` characters each.
  const familiesOf = (n: number): Record<string, string[]> => {
    const fill = (unit: string): string => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
    return {
      stack: [
        fill('at '),
        `at ${fill('/a')}`,
        `at x (${fill('a/')}`,
        fill('at a ('),
        `at (${fill(':1')}`,
        `at (${fill('a:1a')}`,
        fill('at a.'),
        `at ${fill('a.')}(`,
        fill('File "'),
        `File "${fill('a')}`,
        fill('#0 '),
        `#0 ${fill('a.php')}`,
        fill('in a.php'),
        ` ${fill('a.go:1')}`,
        fill(';a.go:1'),
        fill('=a.rb'),
        ` ${fill('a.rb:1:')}`,
        fill('System.A'),
        `Caused by: ${fill('a.')}`,
        fill('goroutine 1 ['),
        `at a.b() in ${fill('x')}`,
        fill('\npanic:'),
        fill('at async new '),
        `at ${fill('a/')}.js:1`,
        fill(':line Server=)):line '),
        fill("thread '"),
      ],
      path: [
        ` ${fill('/a')}`,
        ` /home${fill('/a')}`,
        ` ${fill('/a.')}`,
        ` ${fill('/a.j')}`,
        fill(' /home'),
        `C:\\${fill('a ')}`,
        `C:\\${fill('a \\')}`,
        ` ${fill('C:\\')}`,
        `\\\\${fill('a\\')}`,
        fill(' /a/b.js.'),
        ` ${fill('/x.js')}`,
        fill('(C:/a '),
        ` ${fill('/a=')}`,
        fill('=/home/a'),
        fill('=C:\\a'),
      ],
      address: [
        fill('10.'),
        fill('10.0.0.1.'),
        fill('10.0.0.'),
        ` ${fill('1')}`,
        fill(' 192.168.'),
        fill('fd00:'),
        fill('fe80::1:'),
        fill('::1'),
        fill(':'),
        `fd12${fill(':1')}`,
        fill('version 10.0.0.1 '),
      ],
      host: [
        fill('a.'),
        fill('a-'),
        ` ${fill('a.local.')}`,
        fill('x.internal.'),
        fill('localhost:'),
        fill('postgres://'),
        fill('@postgres://'),
        `postgres://${fill('a:')}`,
        fill('jdbc:a:'),
        fill('jdbc:oracle:a:'),
        fill('Server=a;'),
        `Server=a;${fill('a=b;')}`,
        fill('Server=a;Password'),
        fill('a://b:'),
        fill('eyJaaaaaaaaaa.'),
        fill('sk-'),
      ],
    };
  };
  test('adversarial input per pattern family is scanned (and redacted) in linear time (12.5 KB against 200 KB)', () => {
    const small = familiesOf(12_500);
    const large = familiesOf(12_500 * GROWTH);
    for (const family of Object.keys(small))
      assertLinear(family, (scale) => () => {
        for (const text of (scale === 1 ? small : large)[family]!) findLeaks(redactCredentials(text));
      });
  });
});
