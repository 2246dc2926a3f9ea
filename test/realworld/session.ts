// One scripted session of the official SDK client with a real server: directly, or through
// mcp-warden under a policy (in-process for HTTP, the CLI for stdio). The script: tools/list,
// every tool once with valid arguments, calls that should fail as tool errors, an unknown tool, an
// unknown method, resources and prompts where declared (one that exists, one that does not),
// malformed input (a body that is not JSON, JSON that is no request), ping. What comes back is a
// transcript: every message the client received, as text, and which step sent each request id.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { Ajv } from 'ajv';
import type { Policy } from '../../src/config/types.ts';
import { cliArgs } from '../helpers/bundle.ts';
import type { LogRecord } from '../helpers/log-capture.ts';
import { startProxy } from '../helpers/proxy.ts';
import type { RealServer, Started } from './servers.ts';

/** How a run reaches the server: directly, or through mcp-warden under a policy (its file, for the stdio CLI). */
export type Via = { kind: 'direct' } | { kind: 'proxy'; policy: Policy; policyFile: string };

export interface Transcript {
  /** Every message the client received, as JSON text, in order. */
  received: string[];
  /** The step that sent each request, by its id (as JSON). */
  steps: Map<string, string>;
  /** What came back to input sent outside the SDK (status and body), by step. */
  raw: Array<[step: string, answer: string]>;
  /** The proxy's log records (none for a direct run). */
  records: LogRecord[];
  /** What only this run has (its folder, its port): masked before runs are compared. */
  ownText: string[];
}

/** Records every message the client receives and the step that sent each request; passes everything on. */
class Recorder implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: Transport['onclose'];
  onerror?: Transport['onerror'];
  step = 'connect';

  constructor(
    readonly inner: Transport,
    private readonly t: Transcript,
  ) {}

  async start(): Promise<void> {
    this.inner.onmessage = (message, extra) => {
      this.t.received.push(JSON.stringify(message));
      this.onmessage?.(message, extra);
    };
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (e) => this.onerror?.(e);
    await this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if ('id' in message && 'method' in message) this.t.steps.set(JSON.stringify(message.id), this.step);
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }
}

type Schema = Record<string, unknown>;

/** A value that satisfies `schema` as far as a generic reading goes: defaults, enums, required properties. */
export function sample(schema: unknown): unknown {
  const s = (schema ?? {}) as Schema;
  if (s.default !== undefined) return s.default;
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) if (Array.isArray(s[key]) && s[key].length > 0) return sample(s[key][0]);
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  switch (type) {
    case 'string':
      return typeof s.minLength === 'number' && s.minLength > 1 ? 'x'.repeat(s.minLength) : 'x';
    case 'integer':
    case 'number':
      return typeof s.minimum === 'number' ? s.minimum : 1;
    case 'boolean':
      return false;
    case 'array':
      return typeof s.minItems === 'number' && s.minItems > 0 ? Array.from({ length: s.minItems }, () => sample(s.items)) : [];
    case 'object':
    case undefined: {
      const out: Record<string, unknown> = {};
      const props = (s.properties ?? {}) as Record<string, unknown>;
      for (const name of Array.isArray(s.required) ? (s.required as string[]) : []) out[name] = sample(props[name]);
      return out;
    }
    default:
      return null;
  }
}

/** `value` with every string's ROOT replaced by the run's root folder. */
function rooted(value: unknown, root: string): unknown {
  return JSON.parse(JSON.stringify(value).replaceAll('ROOT', root));
}

const CALL = { timeout: 15_000 };
/**
 * The SDK client's own validator of structuredContent, without its console warnings: Rust servers'
 * schemas use formats ajv does not know (uint64), which it would print for every tools/list.
 */
const QUIET_VALIDATOR = new AjvJsonSchemaValidator(new Ajv({ strict: false, validateSchema: false, allErrors: true, logger: false }));
const NOT_JSON = '{"jsonrpc":"2.0","id":"warden-broken","method":"tools/list",';
const NOT_A_REQUEST = '{"jsonrpc":"2.0","id":"warden-not-a-request","method":42}';

/** Runs `server`'s session `via` a path; the server is started fresh in its own folder and stopped after. */
export async function runSession(server: RealServer, via: Via): Promise<Transcript> {
  const dir = mkdtempSync(join(tmpdir(), 'warden-realworld-'));
  const t: Transcript = { received: [], steps: new Map(), raw: [], records: [], ownText: [dir] };
  const closers: Array<() => Promise<void>> = [];
  try {
    const started = await server.start(dir);
    if (started.kind === 'http') {
      closers.push(started.close);
      t.ownText.push(started.url.port);
    }
    const { transport, raw, records } = await connect(server, started, via, dir, closers);
    const rec = new Recorder(transport, t);
    const client = new Client({ name: 'warden-realworld', version: '1.0.0' }, { capabilities: {}, jsonSchemaValidator: QUIET_VALIDATOR });
    client.onerror = () => {};
    await client.connect(rec);
    closers.unshift(() => client.close());
    const step = async (name: string, run: () => Promise<unknown>): Promise<unknown> => {
      rec.step = name;
      try {
        return await run();
      } catch (err) {
        return { rejected: (err as Error).message };
      }
    };
    const listed = (await step('tools/list', () => client.listTools())) as { tools?: Array<{ name: string; inputSchema?: unknown }> };
    const tools = listed.tools ?? [];
    for (const tool of tools) {
      if (server.skip?.[tool.name]) continue;
      const args = rooted(server.args?.[tool.name] ?? sample(tool.inputSchema), join(dir, 'root')) as Record<string, unknown>;
      await step(`call ${tool.name}`, () => client.callTool({ name: tool.name, arguments: args }, undefined, CALL));
    }
    for (const [i, [name, args]] of (server.failing ?? []).entries())
      await step(`failing call ${i + 1}: ${name}`, () =>
        client.callTool({ name, arguments: rooted(args, join(dir, 'root')) as Record<string, unknown> }, undefined, CALL),
      );
    await step('unknown tool', () => client.callTool({ name: 'warden_no_such_tool', arguments: {} }, undefined, CALL));
    await step('unknown method', () => client.request({ method: 'warden/no-such-method', params: {} }, ResultSchema, CALL));
    const caps = client.getServerCapabilities() ?? {};
    if (caps.resources) {
      const list = (await step('resources/list', () => client.listResources())) as { resources?: Array<{ uri: string }> };
      const first = list.resources?.[0];
      if (first) await step('resources/read', () => client.readResource({ uri: first.uri }, CALL));
      await step('resources/read (missing)', () => client.readResource({ uri: 'warden://no-such-resource' }, CALL));
    }
    if (caps.prompts) {
      const list = (await step('prompts/list', () => client.listPrompts())) as {
        prompts?: Array<{ name: string; arguments?: Array<{ name: string; required?: boolean }> }>;
      };
      const first = list.prompts?.[0];
      if (first) {
        const args = Object.fromEntries((first.arguments ?? []).filter((a) => a.required).map((a) => [a.name, 'x']));
        await step('prompts/get', () => client.getPrompt({ name: first.name, arguments: args }, CALL));
      }
      await step('prompts/get (missing)', () => client.getPrompt({ name: 'warden_no_such_prompt' }, CALL));
    }
    for (const [name, body] of [
      ['malformed input: not JSON', NOT_JSON],
      ['malformed input: method 42', NOT_A_REQUEST],
    ] as const) {
      rec.step = name;
      t.raw.push([name, await raw(body, rec.inner)]);
    }
    await step('ping', () => client.ping(CALL));
    await closeAll(closers);
    t.records = await records();
    return t;
  } finally {
    await closeAll(closers);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function closeAll(closers: Array<() => Promise<void>>): Promise<void> {
  while (closers.length > 0) await closers.shift()!().catch(() => {});
}

/** The client's transport for `started`, how to send it raw input, and where the proxy's records come from. */
async function connect(
  server: RealServer,
  started: Started,
  via: Via,
  dir: string,
  closers: Array<() => Promise<void>>,
): Promise<{ transport: Transport; raw: (body: string, transport: Transport) => Promise<string>; records: () => Promise<LogRecord[]> }> {
  if (started.kind === 'stdio') {
    const log = join(dir, 'warden.log.jsonl');
    const [command, ...args] =
      via.kind === 'direct'
        ? started.command
        : [process.execPath, ...(await cliArgs()), 'stdio', '--policy', via.policyFile, '--log-file', log, '--', ...started.command];
    const transport = new StdioClientTransport({
      command: command!,
      args,
      env: { ...(process.env as Record<string, string>), ...started.env },
      cwd: started.cwd ?? dir,
      stderr: 'ignore',
    });
    return {
      transport,
      // A line written to the process's stdin: its answer, if any, comes to the client like any other.
      raw: async (body, t) => {
        const stdin = (t as unknown as { _process?: { stdin?: NodeJS.WritableStream } })._process?.stdin;
        stdin?.write(`${body}\n`);
        return 'written to stdin';
      },
      records: async () => (via.kind === 'direct' ? [] : logLines(log)),
    };
  }
  let url = started.url;
  let records = async (): Promise<LogRecord[]> => [];
  if (via.kind === 'proxy') {
    const proxy = await startProxy(started.url, { policy: () => via.policy });
    closers.push(() => proxy.close());
    url = new URL(started.url.pathname, proxy.url);
    records = async () => proxy.log.records;
  }
  if (server.transport === 'sse') {
    return {
      transport: new SSEClientTransport(url),
      // A POST to the session's message endpoint: the answer comes on the stream; the POST's own status is kept.
      raw: async (body, t) => {
        const endpoint = (t as unknown as { _endpoint?: URL })._endpoint;
        if (!endpoint) return 'no endpoint';
        const res = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        return `${res.status} ${await res.text()}`;
      },
      records,
    };
  }
  return {
    transport: new StreamableHTTPClientTransport(url, {
      reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
    }),
    raw: async (body, t) => {
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      if (t.sessionId) headers['mcp-session-id'] = t.sessionId;
      const version = (t as unknown as { _protocolVersion?: string })._protocolVersion;
      if (version) headers['mcp-protocol-version'] = version;
      const res = await fetch(url, { method: 'POST', headers, body });
      return `${res.status} ${res.headers.get('content-type') ?? ''} ${await res.text()}`;
    },
    records,
  };
}

function logLines(path: string): LogRecord[] {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogRecord);
}
