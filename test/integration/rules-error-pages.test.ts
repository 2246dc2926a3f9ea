// Error pages through the real proxy (#43, #46 item 4): an HTML or text page that answers instead
// of JSON-RPC is read by the leak rules too (an Express 500 page's stack trace and install paths),
// a balancer's bare page is not a leak, and a tools/call of a tool the catalogue lacks answered
// with a page is an unknown tool as well as an unusable body; enforce's rewrite of it as an
// unknown tool has that finding in the log.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadPolicyFile } from '../../src/config/load.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { assertFires, assertSilent, runScenario, type Reply } from '../helpers/rule-scenario.ts';

const V = '2025-11-25';
const call = (name: string) => ({ method: 'tools/call', params: { name, arguments: { text: 'hi' } } });
const page = (status: number, type: string, body: string) => (): Reply => ({ status, headers: { 'content-type': type }, body });

/** What Express 5's default error handler sends outside production. */
const EXPRESS_500 = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Error</title>
</head>
<body>
<pre>TypeError: Cannot read properties of undefined (reading &#39;id&#39;)<br> &nbsp; &nbsp;at lookup (/srv/app/dist/tools.js:42:17)<br> &nbsp; &nbsp;at Layer.handleRequest (/srv/app/node_modules/router/lib/layer.js:152:17)</pre>
</body>
</html>
`;
const NGINX_502 =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';
const PY_TEXT =
  'Traceback (most recent call last):\n  File "/opt/app/server.py", line 88, in call_tool\n    return handler(args)\nKeyError: \'id\'\n';

describe('error pages are read by the leak rules', () => {
  test('an Express 500 page: html-body, and the stack trace and install path it shows', async () => {
    const res = await runScenario({ version: V, request: call('echo'), respond: page(500, 'text/html; charset=utf-8', EXPRESS_500) });
    assertFires(res, 'html-body');
    const stack = assertFires(res, 'leaked-stack-trace');
    assert.equal(stack.pointer, '/response/body');
    assert.match(String(stack.message), /error page contains a Node\.js stack frame/);
    assertFires(res, 'leaked-path');
    assertSilent(res, 'unknown-tool-unanswered');
  });

  test('a text/plain Python traceback: non-json-body and leaked-stack-trace', async () => {
    const res = await runScenario({ version: V, request: call('echo'), respond: page(500, 'text/plain', PY_TEXT) });
    assertFires(res, 'non-json-body');
    assertFires(res, 'leaked-stack-trace');
  });

  test("a balancer's bare 502 page is no leak (html-body only)", async () => {
    const res = await runScenario({ version: V, request: call('echo'), respond: page(502, 'text/html', NGINX_502) });
    assertFires(res, 'html-body');
    for (const rule of ['leaked-stack-trace', 'leaked-path', 'leaked-private-address', 'leaked-internal-host']) assertSilent(res, rule);
  });

  test('a page naming only what the client sent is no leak', async () => {
    const res = await runScenario({
      version: V,
      request: { method: 'tools/call', params: { name: 'echo', arguments: { text: '/home/u/notes.txt' } } },
      respond: page(404, 'text/html', '<html><body><h1>Not found: /home/u/notes.txt</h1></body></html>'),
    });
    assertSilent(res, 'leaked-path');
  });
});

describe('an unknown tool answered with a page', () => {
  test('unknown-tool-unanswered fires with html-body; a known tool answered so does not', async () => {
    const unknown = await runScenario({
      version: V,
      request: call('nope'),
      respond: page(404, 'text/html', '<!DOCTYPE html><pre>Cannot POST /mcp</pre>'),
    });
    assertFires(unknown, 'html-body');
    const v = assertFires(unknown, 'unknown-tool-unanswered');
    assert.match(
      String(v.message),
      /tools\/call named "nope", which is not in the server's tools\/list, and got an HTML page instead of a JSON-RPC error/,
    );
    const known = await runScenario({
      version: V,
      request: call('echo'),
      respond: page(404, 'text/html', '<!DOCTYPE html><pre>Cannot POST /mcp</pre>'),
    });
    assertFires(known, 'html-body');
    assertSilent(known, 'unknown-tool-unanswered');
  });

  test('enforce.yaml answers -32602 "Unknown tool: nope", and the log says the rule it rewrote under', async () => {
    const loaded = await loadPolicyFile('config/enforce.yaml', { rewritable: REWRITABLE });
    assert.ok(loaded.ok);
    const res = await runScenario({
      version: V,
      request: call('nope'),
      respond: page(500, 'text/html', EXPRESS_500),
      proxy: { policy: () => loaded.policy },
    });
    const got = JSON.parse(res.body) as { id: unknown; error: { code: number; message: string } };
    assert.deepEqual([got.id, got.error.code, got.error.message], ['test-1', -32602, 'Unknown tool: nope']);
    assert.doesNotMatch(res.body, /srv\/app|TypeError/);
    const v = assertFires(res, 'unknown-tool-unanswered');
    assert.equal(v.applied, true);
    // html-body's rewrite built the answer first (catalogue order): this rule's finding is settled by it.
    assert.ok(
      res.records.some((r) => r.msg === 'rewrite' && r.id === 'test-1'),
      'a rewrite record',
    );
  });
});
