import { test } from 'node:test';
import assert from 'node:assert/strict';
import { excerpt, requestExcerpt } from '../../src/redact/excerpt.ts';
import { pointer } from '../../src/codec/json-pointer.ts';
import { redactText } from '../../src/redact/text.ts';
import { hideText } from '../../src/redact/values.ts';

test('redactText masks bearer tokens, JWTs, API keys and key=value secrets, and nothing else', () => {
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlMTIz';
  const out = redactText(`jwt ${jwt} at 10:30, Authorization: Bearer abc.def-ghi, key sk-abcdEFGH1234ijkl, password=hunter2&x=1`);
  for (const secret of [jwt, 'abc.def-ghi', 'sk-abcdEFGH1234ijkl', 'hunter2']) assert.ok(!out.includes(secret), `${secret} in ${out}`);
  assert.match(out, /at 10:30/);
  assert.match(out, /x=1/);
  assert.equal(redactText('nothing to hide: 42'), 'nothing to hide: 42');
});

test('excerpt is one short redacted line', () => {
  assert.equal(excerpt('a\n  b\tc'), 'a b c');
  assert.equal(excerpt('x'.repeat(500)).length, 160);
  assert.equal(excerpt({ token: 'abc' }), '{"token":"[REDACTED]"}');
});

test('excerpt masks values under credential names at any depth, and credential shapes in any string', () => {
  let deep: unknown = { db: { password: 'cnry-deep-pw' }, dsn: 'postgres://app:cnry-dsn-pw@db:5432/prod' };
  for (let i = 0; i < 40; i++) deep = { level: deep };
  const out = excerpt(deep, 10_000);
  assert.ok(!out.includes('cnry-deep-pw') && !out.includes('cnry-dsn-pw'), out);
  assert.match(out, /"password":"\[REDACTED\]"/);
  assert.match(out, /postgres:\/\/app:\[REDACTED\]@db:5432\/prod/);
  // Booleans and null under a credential's name say nothing and stay.
  assert.equal(excerpt({ has_password: true, token: null }), '{"has_password":true,"token":null}');
});

test('a credential right after a newline is found, in a value and in JSON text whose escapes were never undone', () => {
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlMTIz';
  const key = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';
  const text = `Error: boom\n${jwt}\nBearer cnry-nl-bearer1\n\t${key}\npostgres://app:cnry-nl-pw@db/x`;
  for (const out of [
    excerpt({ stack: text }, 10_000),
    excerpt(JSON.stringify({ stack: text }), 10_000),
    redactText(JSON.stringify(text)),
  ]) {
    for (const secret of [jwt, key, 'cnry-nl-bearer1', 'cnry-nl-pw']) assert.ok(!out.includes(secret), `${secret} in ${out}`);
    assert.match(out, /Error: boom/);
  }
});

test('excerpt redacts before it cuts: a secret straddling the cut never shows in part', () => {
  const jwt = `eyJhbGciOiJIUzI1NiJ9.${'eyJzdWIiOiIx'.repeat(20)}.c2lnbmF0dXJlMTIz`;
  const out = excerpt(`${'word '.repeat(28)}${jwt}`, 160);
  assert.ok(!out.includes('eyJ'), out);
  assert.ok(out.endsWith('[REDACTED]'), out);
});

test('a long text is redacted in a head, never cut inside a credential', () => {
  const dsn = 'postgres://app:cnry-long-pw@db:5432/prod';
  for (const at of [100, 16 * 1024 - 20, 16 * 1024 - 1024 - 10, 16 * 1024 + 5]) {
    const text = `${'a '.repeat(at / 2)}${dsn} ${'b'.repeat(40_000)}`;
    for (const max of [160, 2000, 20_000]) {
      const out = excerpt(text, max);
      assert.ok(!out.includes('cnry-long-pw'), `at ${at}, max ${max}`);
      assert.equal(out.length, max);
      assert.ok(out.endsWith('…'));
    }
  }
  // A head that redaction shrinks below what is shown: the whole text is redacted.
  const jwts = `${'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlMTIz '.repeat(400)}tail postgres://u:cnry-after@h/d`;
  assert.ok(!excerpt(jwts, 5000).includes('cnry-after'));
  assert.match(excerpt(jwts, 5000), /tail postgres:\/\/u:\[REDACTED\]@h\/d$/);
});

test('members written as nothing do not count toward what an excerpt shows', () => {
  const quiet = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`u${i}`, i % 2 === 0 ? undefined : () => i]));
  assert.equal(excerpt({ ...quiet, b: 'shown' }, 40), '{"b":"shown"}');
});

test('a value nested far deeper than the stack: its head, as deep as it shows', () => {
  for (const array of [false, true]) {
    let deep: unknown = 'cnry-deep';
    for (let i = 0; i < 200_000; i++) deep = array ? [deep] : { c: deep };
    const head = (array ? '[' : '{"c":').repeat(200);
    assert.equal(excerpt(deep, 40), `${head.slice(0, 39)}…`);
  }
});

test('requestExcerpt keeps the envelope and hides params and every member beyond it', () => {
  const out = requestExcerpt(
    {
      jsonrpc: '1.0',
      id: 'r-1',
      method: 'tools/call',
      params: { name: 'lookup', arguments: { note: 'cnry-a' } },
      auth: 'cnry-b',
      extra: { t: 'cnry-c', n: 3 },
    },
    1000,
  );
  for (const secret of ['cnry-a', 'cnry-b', 'cnry-c']) assert.ok(!out.includes(secret), out);
  assert.match(out, /"jsonrpc":"1.0","id":"r-1","method":"tools\/call"/);
  assert.match(out, /"extra":\{"t":"\[REDACTED\]","n":3\}/);
  // An id or method that is itself a credential is masked by shape.
  assert.doesNotMatch(requestExcerpt({ jsonrpc: '2.0', id: 'ghp_abcdefghijklmnopqrstuvwxyz0123456789', method: 'x' }), /ghp_/);
  assert.equal(requestExcerpt('cnry-d'), '[REDACTED]');
});

test('hideText hides every string at any depth, and past the walk bound the whole subtree', () => {
  let deep: unknown = { secret: 'cnry-bottom' };
  for (let i = 0; i < 300; i++) deep = { next: deep };
  const out = JSON.stringify(hideText(deep));
  assert.ok(!out.includes('cnry-bottom'));
  assert.match(out, /\[REDACTED: nested too deep\]/);
  assert.deepEqual(hideText({ a: ['x', 1, true, null, { b: 'y' }] }), { a: ['[REDACTED]', 1, true, null, { b: '[REDACTED]' }] });
});

test('pointer escapes ~ and /', () => {
  assert.equal(pointer('response', 'a/b', 'c~d', 0), '/response/a~1b/c~0d/0');
});
