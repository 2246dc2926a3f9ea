import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { publicOrigin, rebaseUrl, rewriteResourceMetadata, rewriteWwwAuthenticate } from '../../src/transport/public-url.ts';

const UP = 'http://127.0.0.1:3000';
const PUB = 'https://warden.example';

function fakeRequest(headers: Record<string, string>): IncomingMessage {
  return { headers, socket: new Socket() } as unknown as IncomingMessage;
}

test('publicOrigin: configured URL wins, else Host and scheme; X-Forwarded-Proto only when trusted', () => {
  const req = fakeRequest({ host: 'proxy.local:8080', 'x-forwarded-proto': 'https' });
  assert.equal(publicOrigin(req, new URL('https://pub.example/base/')), 'https://pub.example');
  assert.equal(publicOrigin(req), 'http://proxy.local:8080');
  assert.equal(publicOrigin(req, undefined, { trustForwarded: true }), 'https://proxy.local:8080');
  assert.equal(publicOrigin(fakeRequest({ host: 'PROXY.local:80' })), 'http://proxy.local');
});

test('publicOrigin: a Host carrying a path or userinfo is not trusted', () => {
  assert.doesNotMatch(publicOrigin(fakeRequest({ host: 'evil.example/x' })), /evil/);
  assert.doesNotMatch(publicOrigin(fakeRequest({ host: 'a@evil.example' })), /evil/);
});

test('rebaseUrl: replaces a matching origin, keeps path, query and fragment byte for byte', () => {
  assert.equal(rebaseUrl(`${UP}/mcp`, UP, PUB), `${PUB}/mcp`);
  assert.equal(rebaseUrl(`${UP}/a/../b?x=%2f&y#f`, UP, PUB), `${PUB}/a/../b?x=%2f&y#f`);
  assert.equal(rebaseUrl(`${UP}?q=1`, UP, PUB), `${PUB}?q=1`);
  assert.equal(rebaseUrl(UP, UP, PUB), PUB);
  assert.equal(rebaseUrl('HTTP://127.0.0.1:3000/mcp', UP, PUB), `${PUB}/mcp`);
  assert.equal(rebaseUrl('http://localhost/x', 'http://localhost', PUB), `${PUB}/x`);
  assert.equal(rebaseUrl('http://localhost:80/x', 'http://localhost', PUB), `${PUB}/x`);
});

test('rebaseUrl: other origins, relative and malformed values are untouched', () => {
  for (const value of [
    'http://127.0.0.1:3001/mcp',
    'https://127.0.0.1:3000/mcp',
    'https://auth.example/authorize',
    '/mcp',
    'not a url',
    'http://[bad/x',
    '',
  ]) {
    assert.equal(rebaseUrl(value, UP, PUB), value);
  }
});

test('rewriteWwwAuthenticate: quoted and token forms, several challenges', () => {
  const header = `Bearer error="invalid_token", resource_metadata="${UP}/.well-known/oauth-protected-resource/mcp", DPoP algs="ES256", resource_metadata=${UP}/.well-known/oauth-protected-resource`;
  assert.equal(
    rewriteWwwAuthenticate(header, UP, PUB),
    `Bearer error="invalid_token", resource_metadata="${PUB}/.well-known/oauth-protected-resource/mcp", DPoP algs="ES256", resource_metadata=${PUB}/.well-known/oauth-protected-resource`,
  );
  assert.equal(rewriteWwwAuthenticate(`Bearer RESOURCE_METADATA = "${UP}/x"`, UP, PUB), `Bearer RESOURCE_METADATA = "${PUB}/x"`);
});

test('rewriteWwwAuthenticate: other origins, other parameters and look-alikes inside quoted strings stay', () => {
  const external = 'Bearer resource_metadata="https://auth.example/.well-known/oauth-protected-resource"';
  assert.equal(rewriteWwwAuthenticate(external, UP, PUB), external);
  const tricky = `Bearer error_description="see resource_metadata=\\"${UP}/x\\"", realm="${UP}/"`;
  assert.equal(rewriteWwwAuthenticate(tricky, UP, PUB), tricky);
  const notTheParam = `Bearer my_resource_metadata="${UP}/x"`;
  assert.equal(rewriteWwwAuthenticate(notTheParam, UP, PUB), notTheParam);
  assert.equal(rewriteWwwAuthenticate('Basic realm="x"', UP, PUB), 'Basic realm="x"');
});

test('rewriteWwwAuthenticate: escapes inside a rewritten quoted value are re-encoded', () => {
  assert.equal(rewriteWwwAuthenticate(`Bearer resource_metadata="${UP}/a\\"b"`, UP, PUB), `Bearer resource_metadata="${PUB}/a\\"b"`);
});

test('rewriteResourceMetadata: rebases `resource` with a nested path, leaves the rest', () => {
  const doc = { resource: `${UP}/api/v1/mcp`, authorization_servers: ['https://auth.example', UP], scopes_supported: ['mcp'] };
  const out = rewriteResourceMetadata(Buffer.from(JSON.stringify(doc, null, 2)), UP, PUB);
  assert.ok(out);
  assert.deepEqual(JSON.parse(out.toString('utf8')), { ...doc, resource: `${PUB}/api/v1/mcp` });
});

test('rewriteResourceMetadata: undefined when not JSON, not an object, or nothing to change', () => {
  const cases = [
    'not json',
    '<html></html>',
    '',
    '[1,2]',
    'null',
    '"http://127.0.0.1:3000/mcp"',
    JSON.stringify({ issuer: UP }),
    JSON.stringify({ resource: 42 }),
    JSON.stringify({ resource: 'https://elsewhere.example/mcp' }),
  ];
  for (const body of cases) assert.equal(rewriteResourceMetadata(Buffer.from(body), UP, PUB), undefined, body);
});
