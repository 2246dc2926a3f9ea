import { checkInProcess } from './helpers/check.ts';
import { startRawServer } from './fixtures/raw-server.ts';
const server = await startRawServer((req, res, body) => {
  const { id = null } = JSON.parse(body.toString() || '{}');
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message: `rejected credentials ${req.headers.authorization}` } }));
});
const r = await checkInProcess(new URL('/mcp', server.url).href, '-H', 'Authorization: Bearer tok_9f3KqLmZ82xWvR4t', '--format', 'json', '--probe-timeout', '2s');
console.log(r.stdout.slice(0, 3000));
await server.close();
