import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidArgumentError } from 'commander';
import { parseDuration, parseListen, parsePeerAddress, parseSize, parseUrl } from '../../src/config/cli-options.ts';

/** Asserts fn throws commander's InvalidArgumentError whose message names the expected form and echoes the value. */
function rejects(fn: (v: string) => unknown, value: string, form: RegExp): void {
  assert.throws(
    () => fn(value),
    (err: unknown) => {
      assert.ok(err instanceof InvalidArgumentError, `${JSON.stringify(value)}: ${String(err)}`);
      assert.equal(err.code, 'commander.invalidArgument');
      assert.match(err.message, form);
      assert.ok(err.message.includes(`"${value}"`), `message echoes the value: ${err.message}`);
      return true;
    },
    `${JSON.stringify(value)} should be rejected`,
  );
}

describe('parseUrl', () => {
  test('http and https URLs parse', () => {
    const u = parseUrl('http://127.0.0.1:3000/mcp');
    assert.ok(u instanceof URL);
    assert.equal(u.href, 'http://127.0.0.1:3000/mcp');
    assert.equal(parseUrl('https://example.com/a/b?x=1').pathname, '/a/b');
    assert.equal(parseUrl('HTTPS://Example.COM').href, 'https://example.com/');
    assert.equal(parseUrl('http://[::1]:8080/mcp').hostname, '[::1]');
  });

  test('other schemes and non-URLs are rejected with the expected form', () => {
    for (const bad of [
      '',
      '127.0.0.1:3000',
      '/mcp',
      'ftp://example.com',
      'ws://localhost/mcp',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'http://',
      'not a url',
    ]) {
      rejects(parseUrl, bad, /http\(s\) URL/);
    }
  });
});

describe('parseListen', () => {
  test('host:port', () => {
    assert.deepEqual(parseListen('127.0.0.1:8787'), { host: '127.0.0.1', port: 8787 });
    assert.deepEqual(parseListen('0.0.0.0:80'), { host: '0.0.0.0', port: 80 });
    assert.deepEqual(parseListen('localhost:65535'), { host: 'localhost', port: 65535 });
    assert.deepEqual(parseListen('example.com:0'), { host: 'example.com', port: 0 });
  });

  test(':port listens on 127.0.0.1', () => {
    assert.deepEqual(parseListen(':8787'), { host: '127.0.0.1', port: 8787 });
    assert.deepEqual(parseListen(':1'), { host: '127.0.0.1', port: 1 });
  });

  test('[ipv6]:port', () => {
    assert.deepEqual(parseListen('[::1]:8080'), { host: '::1', port: 8080 });
    assert.deepEqual(parseListen('[::]:443'), { host: '::', port: 443 });
    assert.deepEqual(parseListen('[fe80::1%eth0]:9000'), { host: 'fe80::1%eth0', port: 9000 });
  });

  test('a single-digit port alone listens on 127.0.0.1', () => {
    assert.deepEqual(parseListen('0'), { host: '127.0.0.1', port: 0 });
  });

  test('a bare port listens on 127.0.0.1', {}, () => {
    assert.deepEqual(parseListen('8787'), { host: '127.0.0.1', port: 8787 });
    assert.deepEqual(parseListen('80'), { host: '127.0.0.1', port: 80 });
  });

  test('host and port run together, or a bare port out of range, are rejected', {}, () => {
    for (const bad of ['99999', 'localhost8080', '[::1]8080']) rejects(parseListen, bad, /host:port/);
  });

  test('bad values throw InvalidArgumentError naming host:port', () => {
    for (const bad of [
      '',
      ':',
      'localhost',
      'localhost:',
      'host:65536',
      'host:99999',
      'host:-1',
      'host:80x',
      'host:8 0',
      '::1:8080',
      '[::1]',
      '[::1]:',
      'a:b:80',
    ]) {
      rejects(parseListen, bad, /host:port/);
    }
  });
});

describe('parseSize', () => {
  const cases: Array<[string, number]> = [
    ['4mib', 4 * 1024 * 1024],
    ['4MiB', 4 * 1024 * 1024],
    ['512kb', 512_000],
    ['512KB', 512_000],
    ['512kib', 512 * 1024],
    ['1048576', 1_048_576],
    ['1.5mb', 1_500_000],
    ['1gb', 1e9],
    ['2gib', 2 * 1024 ** 3],
    ['10b', 10],
    ['0', 0],
    ['0.5kib', 512],
    ['2 kib', 2048],
    ['  64kb  ', 64_000],
    ['1.0001kb', 1000],
  ];
  for (const [input, bytes] of cases) {
    test(`${JSON.stringify(input)} → ${bytes}`, () => {
      assert.equal(parseSize(input), bytes);
    });
  }

  test('results are whole numbers of bytes', () => {
    assert.ok(Number.isInteger(parseSize('1.3kib')));
    assert.equal(parseSize('1.3kib'), Math.round(1.3 * 1024));
  });

  test('bad values throw InvalidArgumentError naming the expected form', () => {
    for (const bad of [
      '',
      'abc',
      'mb',
      '-1',
      '-1kb',
      '4tb',
      '4 m i b',
      '1e6',
      '.5mb',
      '1.mb',
      '4mb!',
      '4,096',
      '0x10',
      'Infinity',
      '4 mib 2',
    ]) {
      rejects(parseSize, bad, /size such as/);
    }
  });
});

describe('parseDuration', () => {
  const cases: Array<[string, number]> = [
    ['500ms', 500],
    ['30s', 30_000],
    ['5m', 300_000],
    ['60000', 60_000],
    ['0', 0],
    ['1.5s', 1500],
    ['0.5m', 30_000],
    ['10 s', 10_000],
    [' 30s ', 30_000],
    ['2.4ms', 2],
  ];
  for (const [input, ms] of cases) {
    test(`${JSON.stringify(input)} → ${ms}`, () => {
      assert.equal(parseDuration(input), ms);
    });
  }

  test('bad values throw InvalidArgumentError naming the expected form', () => {
    for (const bad of ['', 'abc', 's', 'ms', '-1', '-5s', '5h', '1d', '30 seconds', '1e3', '.5s', '5m30s', 'Infinity', '30sec']) {
      rejects(parseDuration, bad, /duration such as/);
    }
  });
});

describe('parsePeerAddress', () => {
  test('an address other hosts can reach: host:port, [ipv6]:port, port 0 for any free one', () => {
    assert.deepEqual(parsePeerAddress('10.0.3.7:8788'), { host: '10.0.3.7', port: 8788 });
    assert.deepEqual(parsePeerAddress('proxy-0.mcp-warden:8788'), { host: 'proxy-0.mcp-warden', port: 8788 });
    assert.deepEqual(parsePeerAddress('[fd00::7]:8788'), { host: 'fd00::7', port: 8788 });
    assert.deepEqual(parsePeerAddress('127.0.0.1:0'), { host: '127.0.0.1', port: 0 });
  });

  test('an address naming no one host (what would be published for the others to reach) is refused', () => {
    for (const value of ['0.0.0.0:8788', '[::]:8788', '8788', ':8788', 'nope']) rejects(parsePeerAddress, value, /host:port/);
  });
});
