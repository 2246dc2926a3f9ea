// Runs precision-corpus cases (test/fixtures/corpus/) through the real proxy: one scripted upstream
// (test/fixtures/raw-server.ts) serves every run, told apart by an `x-corpus-run` header the client
// sends on each request; each run is one client session of the case's version (legacy: initialize,
// notifications/initialized, tools/list, then the request under test; 2026-07-28: server/discover,
// tools/list, then the request, with a credential of its own so the proxy keeps its tool catalogue
// apart). Returns what the client received, the bytes the server sent for the request under test,
// and the proxy's log records about the run.
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { Agent, request } from 'undici';
import { MODERN_VERSION, REQUEST_ID, type CorpusCase, type ServerAnswer, type Version } from '../fixtures/corpus/types.ts';
import { startRawServer, type RawServer } from '../fixtures/raw-server.ts';
import type { LogRecord } from './log-capture.ts';
import type { TestProxy } from './proxy.ts';

const PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
const CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
const CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
const CLIENT = { name: 'corpus-client', version: '1.4.0' };
const SERVER = { name: 'corpus-server', version: '2.1.0' };

export interface CorpusRun {
  /** Unique per run: `c<number>`; the request under test carries it as its id unless the case fixes one. */
  key: string;
  kase: CorpusCase;
  version: Version;
  policy: 'audit' | 'enforce';
}

export interface RunOutcome {
  run: CorpusRun;
  /** What the client received for the request under test. */
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** What the server sent for it (undefined if the request never reached the server). */
  sent: { status: number; body: Buffer } | undefined;
  /** The proxy's records about the run. */
  records: LogRecord[];
  /** A failure of the harness itself (a setup step that did not work). */
  harnessError?: string;
}

/** Whether a run must be attributed by time (alone on its proxy) rather than by id or session. */
export const runsAlone = (c: CorpusCase): boolean => c.request?.raw !== undefined || c.request?.id !== undefined;

/** `value` with every REQUEST_ID string replaced by `id`. */
function withId(value: unknown, id: unknown): unknown {
  if (value === REQUEST_ID) return id;
  if (Array.isArray(value)) return value.map((v) => withId(v, id));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withId(v, id)]));
  return value;
}

const isModern = (v: Version): boolean => v === MODERN_VERSION;

/** The result a server of `version` sends: 2026-07-28 adds resultType "complete" and serverInfo unless the case sets resultType. */
function resultFor(result: Record<string, unknown>, version: Version): Record<string, unknown> {
  if (!isModern(version) || 'resultType' in result) return result;
  const meta = { [SERVER_INFO]: SERVER, ...(result._meta as Record<string, unknown> | undefined) };
  return { resultType: 'complete', ...result, _meta: meta };
}

interface Built {
  status: number;
  headers: Record<string, string>;
  chunks: Buffer[];
  reset: boolean;
}

/** The server's answer to the request under test, as bytes. */
function buildAnswer(a: ServerAnswer, id: unknown, version: Version, key: string): Built {
  const status = a.status ?? 200;
  const headers: Record<string, string> = {};
  let message: unknown;
  let raw: Buffer | undefined;
  if (a.result !== undefined) message = { jsonrpc: '2.0', id, result: resultFor(a.result, version) };
  else if (a.error !== undefined) message = { jsonrpc: '2.0', id, error: a.error };
  else if (a.json !== undefined) message = withId(a.json, id);
  else if (a.bodyBase64 !== undefined) raw = Buffer.from(a.bodyBase64, 'base64');
  else if (a.body !== undefined) raw = Buffer.from(a.body, 'utf8');
  let chunks: Buffer[];
  if (a.events) {
    headers['content-type'] = 'text/event-stream';
    chunks = a.events.map((e) => Buffer.from(e.replaceAll(JSON.stringify(REQUEST_ID), JSON.stringify(id ?? null)), 'utf8'));
  } else if (a.sse && message !== undefined) {
    headers['content-type'] = 'text/event-stream';
    headers['cache-control'] = 'no-cache';
    const data = JSON.stringify(message);
    if (isModern(version)) {
      headers['x-accel-buffering'] = 'no';
      chunks = [Buffer.from(`event: message\ndata: ${data}\n\n`)];
    } else if (version === '2025-11-25') {
      // A priming event (an id, empty data) first, as 2025-11-25 servers should send (R38).
      chunks = [Buffer.from(`id: ${key}-0\ndata: \n\n`), Buffer.from(`id: ${key}-1\nevent: message\ndata: ${data}\n\n`)];
    } else {
      chunks = [Buffer.from(`event: message\ndata: ${data}\n\n`)];
    }
  } else {
    if (message !== undefined) {
      headers['content-type'] = 'application/json';
      raw = Buffer.from(JSON.stringify(message), 'utf8');
    }
    chunks = raw && raw.length > 0 ? [raw] : [];
  }
  return { status, headers: { ...headers, ...a.headers }, chunks, reset: a.reset === true };
}

function write(res: ServerResponse, built: Built): Promise<void> {
  return new Promise((resolve) => {
    res.writeHead(built.status, built.headers);
    const all = Buffer.concat(built.chunks);
    if (built.reset) {
      const part = built.chunks.length > 1 ? Buffer.concat(built.chunks.slice(0, -1)) : all.subarray(0, Math.floor(all.length / 2));
      res.write(part, () => {
        res.socket?.destroy();
        resolve();
      });
      return;
    }
    for (const c of built.chunks) res.write(c);
    res.end(() => resolve());
  });
}

export interface CorpusUpstream {
  url: URL;
  register(run: CorpusRun): void;
  /** What the server sent for a run's request under test. */
  sent(key: string): { status: number; body: Buffer } | undefined;
  close(): Promise<void>;
}

export async function startCorpusUpstream(): Promise<CorpusUpstream> {
  const runs = new Map<string, CorpusRun>();
  const sent = new Map<string, { status: number; body: Buffer }>();
  const server: RawServer = await startRawServer(async (req, res, body) => {
    const key = String(req.headers['x-corpus-run'] ?? '');
    const run = runs.get(key);
    if (!run) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`corpus upstream: no run ${JSON.stringify(key)}`);
      return;
    }
    const { kase, version } = run;
    let msg: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(body.toString('utf8'));
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) msg = parsed as Record<string, unknown>;
    } catch {
      msg = undefined;
    }
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(value));
    };
    if (req.headers['x-corpus-phase'] === 'setup') {
      const capabilities = kase.capabilities ?? { tools: {} };
      if (msg?.method === 'initialize') {
        const headers: Record<string, string> = { 'mcp-session-id': `corpus-${key}` };
        return json(200, { jsonrpc: '2.0', id: msg.id, result: { protocolVersion: version, capabilities, serverInfo: SERVER } }, headers);
      }
      if (msg?.method === 'notifications/initialized') {
        res.writeHead(202).end();
        return;
      }
      if (msg?.method === 'server/discover') {
        const result = { supportedVersions: [MODERN_VERSION], capabilities, ttlMs: 60_000, cacheScope: 'public' };
        return json(200, { jsonrpc: '2.0', id: msg.id, result: resultFor(result, version) });
      }
      if (msg?.method === 'tools/list') {
        const result = isModern(version) ? { tools: kase.tools, ttlMs: 60_000, cacheScope: 'private' } : { tools: kase.tools };
        return json(200, { jsonrpc: '2.0', id: msg.id, result: resultFor(result, version) });
      }
      res.writeHead(500, { 'content-type': 'text/plain' }).end('corpus upstream: unexpected setup request');
      return;
    }
    const built = buildAnswer(kase.answer, msg && 'id' in msg ? msg.id : null, version, key);
    sent.set(key, { status: built.status, body: Buffer.concat(built.chunks) });
    await write(res, built);
  });
  return {
    url: new URL('/mcp', server.url),
    register: (run) => void runs.set(run.key, run),
    sent: (key) => sent.get(key),
    close: () => server.close(),
  };
}

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** One client: every request of a run goes through `send`. */
async function post(agent: Agent, url: URL, body: string, headers: Record<string, string>): Promise<Reply> {
  const merged = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== ''));
  const res = await request(url, { method: 'POST', body, headers: merged, dispatcher: agent });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers, body: bytes };
}

/** The name header of a 2026-07-28 request (R48). */
function nameOf(method: string, params: Record<string, unknown> | undefined): string | undefined {
  const v = method === 'tools/call' || method === 'prompts/get' ? params?.name : method === 'resources/read' ? params?.uri : undefined;
  return typeof v === 'string' ? v : undefined;
}

/**
 * Runs one case under one version through the proxy at `proxyUrl`: the session's setup, then the
 * request under test. Records are attributed later (attribute()).
 */
export async function runCase(
  agent: Agent,
  proxyUrl: URL,
  upstream: CorpusUpstream,
  run: CorpusRun,
): Promise<Omit<RunOutcome, 'records'> & { sessionId: string | undefined }> {
  upstream.register(run);
  const { kase, version, key } = run;
  const modern = isModern(version);
  const spec = kase.request ?? {};
  const base: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'x-corpus-run': key,
  };
  const clientCapabilities = kase.clientCapabilities ?? {};
  const setupMeta = (): Record<string, unknown> => ({
    [PROTOCOL_VERSION]: version,
    [CLIENT_CAPABILITIES]: clientCapabilities,
    [CLIENT_INFO]: CLIENT,
  });
  const testMeta = (): Record<string, unknown> => ({ ...setupMeta(), ...spec.meta });
  const session: Record<string, string> = {};
  let harnessError: string | undefined;
  const fail = (what: string, r: Reply) => {
    harnessError ??= `${what}: HTTP ${r.status} ${r.body.toString('utf8').slice(0, 300)}`;
  };
  const setup = { ...base, 'x-corpus-phase': 'setup' };
  const phase = spec.phase;
  if (modern) {
    session.authorization = `Bearer corpus-${key}`;
    // A 2026-07-28 client learns the server's capabilities from server/discover (R20), then lists the tools.
    if (spec.method !== 'server/discover') {
      const headers = { ...setup, ...session, 'mcp-protocol-version': version, 'mcp-method': 'server/discover' };
      const r = await post(
        agent,
        proxyUrl,
        JSON.stringify({ jsonrpc: '2.0', id: `${key}-discover`, method: 'server/discover', params: { _meta: setupMeta() } }),
        headers,
      );
      if (r.status !== 200) fail('server/discover', r);
    }
    if (phase !== 'tools/list') {
      const headers = { ...setup, ...session, 'mcp-protocol-version': version, 'mcp-method': 'tools/list' };
      const r = await post(
        agent,
        proxyUrl,
        JSON.stringify({ jsonrpc: '2.0', id: `${key}-list`, method: 'tools/list', params: { _meta: setupMeta() } }),
        headers,
      );
      if (r.status !== 200) fail('tools/list', r);
    }
  } else if (phase !== 'initialize') {
    const init = { protocolVersion: version, capabilities: clientCapabilities, clientInfo: CLIENT };
    const r = await post(agent, proxyUrl, JSON.stringify({ jsonrpc: '2.0', id: `${key}-init`, method: 'initialize', params: init }), setup);
    if (r.status !== 200) fail('initialize', r);
    const sid = r.headers['mcp-session-id'];
    if (typeof sid === 'string') session['mcp-session-id'] = sid;
    if (version >= '2025-06-18') session['mcp-protocol-version'] = version;
    const n = await post(agent, proxyUrl, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), {
      ...setup,
      ...session,
    });
    if (n.status !== 202) fail('notifications/initialized', n);
    if (phase !== 'tools/list') {
      const l = await post(agent, proxyUrl, JSON.stringify({ jsonrpc: '2.0', id: `${key}-list`, method: 'tools/list' }), {
        ...setup,
        ...session,
      });
      if (l.status !== 200) fail('tools/list', l);
    }
  }
  // The request under test.
  const method =
    spec.method ?? (phase === 'initialize' ? 'initialize' : phase === 'tools/list' || phase === 'relist' ? 'tools/list' : 'tools/call');
  let params = spec.params;
  if (params === undefined && method === 'tools/call') params = { name: kase.tool ?? kase.tools[0]?.name, arguments: kase.arguments ?? {} };
  if (params === undefined && method === 'initialize')
    params = { protocolVersion: version, capabilities: clientCapabilities, clientInfo: CLIENT };
  if (modern && !spec.noMeta) params = { ...params, _meta: { ...testMeta(), ...(params?._meta as Record<string, unknown> | undefined) } };
  const message: Record<string, unknown> = { jsonrpc: '2.0' };
  const id = spec.id === undefined ? key : spec.id;
  if (id !== null) message.id = id;
  message.method = method;
  if (params !== undefined) message.params = params;
  const headers: Record<string, string> = { ...base, 'x-corpus-phase': 'test', ...session };
  if (modern) {
    const declared = (params?._meta as Record<string, unknown> | undefined)?.[PROTOCOL_VERSION];
    headers['mcp-protocol-version'] = typeof declared === 'string' ? declared : version;
    headers['mcp-method'] = method;
    const name = nameOf(method, params);
    if (name !== undefined) headers['mcp-name'] = name;
  }
  const got = await post(agent, proxyUrl, spec.raw ?? JSON.stringify(message), { ...headers, ...spec.headers });
  return {
    run,
    status: got.status,
    headers: got.headers,
    body: got.body,
    sent: upstream.sent(key),
    sessionId: session['mcp-session-id'],
    ...(harnessError ? { harnessError } : {}),
  };
}

/**
 * Runs `runs` through `proxy`: those attributable by id or session `concurrency` at a time, then
 * the others one by one. A record is a parallel run's when it carries one of its ids or its
 * session; the rest belong to the lone run that was in flight when they were logged (from its
 * start to the next one's), so a record written late is not lost.
 */
export async function runAll(
  proxy: TestProxy,
  upstream: CorpusUpstream,
  runs: readonly CorpusRun[],
  concurrency: number,
): Promise<RunOutcome[]> {
  const agent = new Agent({ connections: concurrency * 2, keepAliveTimeout: 10_000 });
  try {
    const parallel = runs.filter((r) => !runsAlone(r.kase));
    const alone = runs.filter((r) => runsAlone(r.kase));
    const pending: Pending[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < parallel.length) {
        const run = parallel[next++]!;
        pending.push(await runOne(agent, proxy, upstream, run));
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    await settle();
    const lone: Array<{ out: Pending; mark: number }> = [];
    for (const run of alone) {
      const mark = proxy.log.records.length;
      lone.push({ out: await runOne(agent, proxy, upstream, run), mark });
    }
    await settle();
    // One pass over the log: records by run.
    const byKey = new Map<string, LogRecord[]>();
    const bySession = new Map<string, string>();
    for (const p of pending) {
      byKey.set(p.run.key, []);
      if (p.sessionId) bySession.set(p.sessionId, p.run.key);
    }
    const keyOf = (r: LogRecord): string | undefined => {
      if (typeof r.id === 'string') {
        const base = r.id.replace(/-(?:init|list|discover)$/, '');
        if (byKey.has(base)) return base;
      }
      return typeof r.session === 'string' ? bySession.get(r.session) : undefined;
    };
    const loneRecords = lone.map((): LogRecord[] => []);
    proxy.log.records.forEach((r, i) => {
      const key = keyOf(r);
      if (key !== undefined) {
        byKey.get(key)!.push(r);
        return;
      }
      let j = lone.length - 1;
      while (j >= 0 && lone[j]!.mark > i) j--;
      if (j >= 0) loneRecords[j]!.push(r);
    });
    const strip = ({ sessionId: _sid, ...rest }: Pending): Omit<RunOutcome, 'records'> => rest;
    return [
      ...pending.map((p) => ({ ...strip(p), records: byKey.get(p.run.key) ?? [] })),
      ...lone.map(({ out }, j) => ({ ...strip(out), records: loneRecords[j]! })),
    ];
  } finally {
    await agent.close();
  }
}

type Pending = Omit<RunOutcome, 'records'> & { sessionId: string | undefined };

async function runOne(agent: Agent, proxy: TestProxy, upstream: CorpusUpstream, run: CorpusRun): Promise<Pending> {
  try {
    return await runCase(agent, proxy.url, upstream, run);
  } catch (err) {
    return {
      run,
      status: 0,
      headers: {},
      body: Buffer.alloc(0),
      sent: upstream.sent(run.key),
      sessionId: undefined,
      harnessError: `client: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
}

/** Records of an exchange are written as the client gets its last byte; POST-level ones right after. */
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 50));
