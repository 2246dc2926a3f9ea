// The real-server corpus: MCP servers published on npm by others, pinned in this folder's
// package.json (installed apart from mcp-warden's own: `npm ci --prefix test/realworld`), each
// started offline on 127.0.0.1 or over stdio, with what its session calls beyond what its tools/list
// says. Chosen for variety of authors, SDKs and transports, not popularity.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../src/proxy/listen.ts';

export const CORPUS_DIR = fileURLToPath(new URL('./', import.meta.url));
const MODULES = join(CORPUS_DIR, 'node_modules');
const mod = (...parts: string[]): string => join(MODULES, ...parts);

export type Transport = 'stdio' | 'sse' | 'streamable-http' | 'stateless-http';

/** A server started for one run: where a client reaches it. */
export type Started =
  | { kind: 'http'; url: URL; close(): Promise<void> }
  | { kind: 'stdio'; command: string[]; env: Record<string, string>; cwd?: string };

export interface RealServer {
  /** Short name, used in verdicts.json and the README table. */
  name: string;
  /** What npm installs: package@version. */
  package: string;
  /** What it is built on (SDK and version, or none). */
  builtOn: string;
  transport: Transport;
  /** Starts a fresh server whose state lives in `dir` (empty, its own per run). */
  start(dir: string): Promise<Started>;
  /** Arguments for tools whose schema alone does not make a meaningful call (the rest get generated ones); ROOT is the run's folder. */
  args?: Record<string, Record<string, unknown>>;
  /** Calls that should fail as tool errors (a model could fix them): [tool, arguments]. */
  failing?: Array<[string, Record<string, unknown>]>;
  /** Tools not called: each with why (they would reach the network, or never return). */
  skip?: Record<string, string>;
  /** Text that differs between two runs of the same session (times, temporary paths, hashes), masked before comparing. */
  volatile?: RegExp[];
  /** A binary the server needs: packages for linux-x64 only, installed as optional dependencies elsewhere skipped. */
  binary?: string;
}

/** Waits until something accepts connections on `port` (bounded: 15 s). */
async function listening(port: number, child: ChildProcess, what: string): Promise<void> {
  const { connect } = await import('node:net');
  const deadline = performance.now() + 15_000;
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode} before listening`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what} did not listen on ${port} within 15 s`);
}

/**
 * Starts an HTTP server process on a free port (`launch` says how, given the port) and resolves once
 * it listens on it, with its URL at `path`; close() ends it (SIGTERM, then SIGKILL).
 */
async function httpServer(
  what: string,
  dir: string,
  path: string,
  launch: (port: number) => { command: string[]; env?: Record<string, string> },
): Promise<Started> {
  const port = await freePort();
  const { command, env = {} } = launch(port);
  const child = spawn(command[0]!, command.slice(1), { cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => {
    if (stderr.length < 4096) stderr += c.toString();
  });
  try {
    await listening(port, child, what);
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${(err as Error).message}; stderr: ${stderr}`);
  }
  return {
    kind: 'http',
    url: new URL(path, `http://127.0.0.1:${port}`),
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise<void>((r) => child.once('close', () => r()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await gone;
      clearTimeout(timer);
    },
  };
}

/** A binary shipped in a package: npm keeps no file mode without its install script, which the corpus does not run. */
function binary(path: string): string {
  chmodSync(path, 0o755);
  return path;
}

export const SERVERS: readonly RealServer[] = [
  {
    name: 'server-memory (SDK 1.0)',
    package: '@modelcontextprotocol/server-memory@2025.9.25',
    builtOn: 'TypeScript SDK 1.0.1',
    transport: 'stdio',
    start: async (dir) => ({
      kind: 'stdio',
      command: [process.execPath, mod('server-memory-old', 'dist', 'index.js')],
      env: { MEMORY_FILE_PATH: join(dir, 'memory.json') },
    }),
    args: {
      create_entities: { entities: [{ name: 'Ada', entityType: 'person', observations: ['writes programs'] }] },
      create_relations: { relations: [{ from: 'Ada', to: 'Ada', relationType: 'knows' }] },
      add_observations: { observations: [{ entityName: 'Ada', contents: ['likes engines'] }] },
      delete_entities: { entityNames: ['Nobody'] },
      delete_observations: { deletions: [{ entityName: 'Ada', observations: ['likes engines'] }] },
      delete_relations: { relations: [{ from: 'Ada', to: 'Ada', relationType: 'knows' }] },
      search_nodes: { query: 'Ada' },
      open_nodes: { names: ['Ada'] },
    },
    failing: [['add_observations', { observations: [{ entityName: 'Nobody', contents: ['x'] }] }]],
  },
  {
    name: 'server-everything (SDK 1.0, SSE)',
    package: '@modelcontextprotocol/server-everything@2025.4.8',
    builtOn: 'TypeScript SDK 1.0.1',
    transport: 'sse',
    start: (dir) =>
      httpServer('server-everything 2025.4.8', dir, '/sse', (port) => ({
        command: [process.execPath, mod('server-everything-old', 'dist', 'sse.js')],
        env: { PORT: String(port) },
      })),
    args: {
      echo: { message: 'hello' },
      add: { a: 2, b: 3 },
      longRunningOperation: { duration: 0.2, steps: 2 },
      sampleLLM: { prompt: 'x', maxTokens: 5 },
      annotatedMessage: { messageType: 'error', includeImage: false },
      getResourceReference: { resourceId: 1 },
    },
    failing: [['add', { a: 'two', b: 3 }]],
    skip: { sampleLLM: 'asks the client to sample, which this client does not offer: the server waits for an answer that never comes' },
  },
  {
    name: 'server-everything',
    package: '@modelcontextprotocol/server-everything@2026.8.31',
    builtOn: 'TypeScript SDK 1.32',
    transport: 'streamable-http',
    start: (dir) =>
      httpServer('server-everything 2026.8.31', dir, '/mcp', (port) => ({
        command: [process.execPath, mod('@modelcontextprotocol', 'server-everything', 'dist', 'index.js'), 'streamableHttp'],
        env: { PORT: String(port) },
      })),
    args: {
      echo: { message: 'hello' },
      'get-sum': { a: 2, b: 3 },
      'trigger-long-running-operation': { duration: 0.2, steps: 2 },
      'get-annotated-message': { messageType: 'error', includeImage: false },
      'get-structured-content': { location: 'New York' },
      'get-resource-reference': { resourceType: 'Text', resourceId: 1 },
      'get-resource-links': { count: 2 },
      'gzip-file-as-resource': { name: 'x.txt.gz', data: 'data:text/plain;base64,aGVsbG8=', outputType: 'resource' },
    },
    failing: [['get-sum', { a: 'two', b: 3 }]],
    volatile: [/created at \d{1,2}:\d{2}:\d{2} [AP]M/g],
    skip: {
      'trigger-sampling-request': 'asks the client to sample, which this client does not offer',
      'trigger-elicitation-request': 'asks the client to elicit, which this client does not offer',
    },
  },
  {
    name: 'server-filesystem',
    package: '@modelcontextprotocol/server-filesystem@2026.8.31',
    builtOn: 'TypeScript SDK 1.32',
    transport: 'stdio',
    start: async (dir) => {
      const root = join(dir, 'root');
      mkdirSync(join(root, 'docs'), { recursive: true });
      writeFileSync(join(root, 'docs', 'notes.md'), '# notes\nhello\n');
      return {
        kind: 'stdio',
        command: [process.execPath, mod('@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js'), root],
        env: {},
      };
    },
    args: {
      read_file: { path: 'ROOT/docs/notes.md' },
      read_text_file: { path: 'ROOT/docs/notes.md', head: 1 },
      read_media_file: { path: 'ROOT/docs/notes.md' },
      read_multiple_files: { paths: ['ROOT/docs/notes.md'] },
      write_file: { path: 'ROOT/docs/new.md', content: 'new\n' },
      edit_file: { path: 'ROOT/docs/notes.md', edits: [{ oldText: 'hello', newText: 'hi' }] },
      create_directory: { path: 'ROOT/made' },
      list_directory: { path: 'ROOT/docs' },
      list_directory_with_sizes: { path: 'ROOT/docs' },
      directory_tree: { path: 'ROOT' },
      move_file: { source: 'ROOT/docs/new.md', destination: 'ROOT/made/new.md' },
      search_files: { path: 'ROOT', pattern: '*.md' },
      get_file_info: { path: 'ROOT/docs/notes.md' },
    },
    // The two answers enforce changed in #26: a path outside the root (the root is named), a file that is not there.
    failing: [
      ['read_text_file', { path: '/etc/passwd' }],
      ['read_text_file', { path: 'ROOT/docs/does-not-exist.md' }],
    ],
    volatile: [/(?:created|modified|accessed): [^\\"]+/g],
  },
  {
    name: 'git-mcp-server',
    package: '@cyanheads/git-mcp-server@2.15.3',
    builtOn: 'TypeScript SDK with @hono/mcp (bundled)',
    transport: 'streamable-http',
    start: (dir) => {
      const repos = join(dir, 'repos');
      mkdirSync(repos, { recursive: true });
      return httpServer('git-mcp-server', dir, '/mcp', (port) => ({
        command: [process.execPath, mod('@cyanheads', 'git-mcp-server', 'dist', 'index.js')],
        env: {
          MCP_TRANSPORT_TYPE: 'http',
          MCP_HTTP_PORT: String(port),
          MCP_HTTP_HOST: '127.0.0.1',
          GIT_BASE_DIR: repos,
          MCP_LOG_LEVEL: 'error',
          HOME: dir,
          LOGS_DIR: join(dir, 'logs'),
        },
      }));
    },
    volatile: [/\b[0-9a-f]{7,40}\b/g],
  },
  {
    name: 'mcp-proxy (stateless) over server-memory',
    package: 'mcp-proxy@6.7.19',
    builtOn: 'TypeScript SDK v2 (2.4), in front of server-memory (SDK 1.0.1)',
    transport: 'stateless-http',
    start: (dir) =>
      httpServer('mcp-proxy', dir, '/mcp', (port) => ({
        command: [
          process.execPath,
          mod('mcp-proxy', 'dist', 'bin', 'mcp-proxy.mjs'),
          '--host',
          '127.0.0.1',
          '--port',
          String(port),
          '--stateless',
          '--',
          process.execPath,
          mod('server-memory-old', 'dist', 'index.js'),
        ],
        env: { MEMORY_FILE_PATH: join(dir, 'memory.json') },
      })),
    args: { search_nodes: { query: 'Ada' }, open_nodes: { names: ['Ada'] } },
    skip: {
      create_entities: 'stateless: every request starts a fresh server, covered by server-memory over stdio',
      create_relations: 'as create_entities',
      add_observations: 'as create_entities',
      delete_entities: 'as create_entities',
      delete_observations: 'as create_entities',
      delete_relations: 'as create_entities',
    },
  },
  {
    name: 'mcp-time (Go, mcp-go)',
    package: 'mcp-time-linux-x64@0.4.0',
    builtOn: 'Go, mark3labs/mcp-go 0.33',
    transport: 'streamable-http',
    binary: mod('mcp-time-linux-x64', 'bin', 'mcp-time'),
    start: (dir) =>
      httpServer('mcp-time', dir, '/mcp', (port) => ({
        command: [
          binary(mod('mcp-time-linux-x64', 'bin', 'mcp-time')),
          '--transport',
          'stream',
          '--address',
          `http://127.0.0.1:${port}/mcp`,
        ],
      })),
    // Go ranges over a map to list its formats: their order differs from one start to the next.
    volatile: [/## Predefined Formats(?:\\n)+[^#]*/g, /\b\d{1,2}:\d{2}(?::\d{2})?\b/g, /\b\d{10,13}\b/g],
  },
  {
    name: 'leanspec (Rust, no SDK)',
    package: '@leanspec/mcp-linux-x64@0.3.0',
    builtOn: 'Rust, the protocol written by hand',
    transport: 'stdio',
    binary: mod('@leanspec', 'mcp-linux-x64', 'leanspec-mcp'),
    start: async (dir) => {
      const cwd = join(dir, 'project');
      mkdirSync(cwd, { recursive: true });
      return { kind: 'stdio', command: [binary(mod('@leanspec', 'mcp-linux-x64', 'leanspec-mcp'))], env: {}, cwd };
    },
  },
  {
    name: 'vaulttools (Rust, rmcp)',
    package: '@vaulttools/mcp-linux-x64@0.1.7',
    builtOn: 'Rust, rmcp 0.16',
    transport: 'stdio',
    binary: mod('@vaulttools', 'mcp-linux-x64', 'bin', 'vaulttools-mcp'),
    start: async (dir) => {
      const vault = join(dir, 'vault');
      mkdirSync(vault, { recursive: true });
      writeFileSync(join(vault, 'note.md'), '# Note\n\nhello [[other]]\n');
      return {
        kind: 'stdio',
        command: [binary(mod('@vaulttools', 'mcp-linux-x64', 'bin', 'vaulttools-mcp')), '--allowed-dir', vault],
        env: {},
      };
    },
  },
];

/** Whether the corpus's packages are installed (npm ci --prefix test/realworld). */
export const installed = (): boolean => existsSync(join(MODULES, '.package-lock.json'));
