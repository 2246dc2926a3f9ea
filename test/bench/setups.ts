// The setups measured side by side: a direct connection, http-proxy-3, nginx, mcp-warden in audit
// and in enforce mode; in front of the official-SDK fixture also mcp-proxy, the stdio-to-HTTP relay
// (npm mcp-proxy) in front of the same server's stdio form. Each proxy runs in its own process;
// `pids()` says whose memory and CPU are the setup's.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startNginx, findNginx } from '../helpers/nginx.ts';
import { childPort } from '../helpers/net.ts';
import { childEntry, descendantPids, profileFlags, startChild, startPlainProcess, stopTree, waitForPort, type Child } from './procs.ts';

export const SETUPS = ['direct', 'http-proxy-3', 'nginx', 'audit', 'enforce'] as const;
export type SetupName = (typeof SETUPS)[number];
/**
 * A setup; mcp-proxy, which only the SDK upstream has (it needs a stdio server: the SDK fixture
 * has one, the fast upstream not); or the experiment that prices mcp-warden's transport alone (proxy-child.ts).
 */
export type TargetKind = SetupName | 'mcp-proxy' | 'undici-floor' | 'dispatch-floor';
/** The setups in front of the official-SDK fixture: the same, and mcp-proxy beside the pass-through baselines. */
export const SDK_SETUPS: readonly TargetKind[] = ['direct', 'http-proxy-3', 'nginx', 'mcp-proxy', 'audit', 'enforce'];

/** How to install a setup that is not part of this package, said when it is skipped. */
export const INSTALL_HINTS: Partial<Record<TargetKind, string>> = {
  nginx: 'Debian package nginx-light',
  'mcp-proxy': 'npm ci --prefix test/realworld',
};

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** mcp-proxy's CLI, pinned (6.7.19) in test/realworld/package.json. */
export const MCP_PROXY_CLI = `${ROOT}test/realworld/node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs`;

export interface Target {
  setup: TargetKind;
  /** The MCP endpoint as the client reaches it. */
  url: URL;
  /** PIDs whose RSS is the setup's (none for direct). */
  pids(): number[];
  /** The proxy child, for IPC memory reads (Node proxies only). */
  child?: Child;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** mcp-warden's log file (default /dev/null). */
  logFile?: string;
  /** Extra node flags for the proxy child (--expose-gc, --cpu-prof...). */
  nodeFlags?: string[];
}

/** The node options the Docker image runs mcp-warden with (its `ENV NODE_OPTIONS` line): the bench measures it as shipped. */
export function imageNodeOptions(): string[] {
  const line = /^ENV NODE_OPTIONS="([^"]*)"/m.exec(readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8'));
  return line ? line[1]!.split(/\s+/).filter(Boolean) : [];
}

/**
 * Starts `setup` in front of `upstream`; nginx and mcp-proxy resolve to undefined when they are not
 * installed. mcp-proxy does not use `upstream`: it runs the SDK fixture's stdio form as its own child.
 */
export async function startTarget(setup: TargetKind, upstream: URL, opts: StartOptions = {}): Promise<Target | undefined> {
  if (setup === 'direct') return { setup, url: upstream, pids: () => [], stop: async () => {} };
  if (setup === 'mcp-proxy') return existsSync(MCP_PROXY_CLI) ? startMcpProxy() : undefined;
  if (setup === 'nginx') {
    const binary = findNginx();
    if (!binary) return undefined;
    const nginx = await startNginx(binary, upstream);
    return { setup, url: new URL(upstream.pathname, `http://127.0.0.1:${nginx.port}`), pids: nginx.pids, stop: nginx.stop };
  }
  const args = [setup, upstream.href, ...(opts.logFile ? [opts.logFile] : [])];
  const image = setup === 'audit' || setup === 'enforce' ? imageNodeOptions() : [];
  const { child, ready } = await startChild<{ port: number }>('proxy-child', args, [
    ...image,
    ...profileFlags(),
    ...(opts.nodeFlags ?? []),
  ]);
  return {
    setup,
    url: new URL(upstream.pathname, `http://127.0.0.1:${ready.port}`),
    pids: () => [child.pid],
    child,
    stop: () => child.stop(),
  };
}

/**
 * mcp-proxy (stateful: one MCP session per client, as the other setups hold one, and its default)
 * on a free port, spawning the SDK fixture's stdio form (bundled, plain node) as its one server;
 * resolves once its port answers. Its /mcp endpoint is the client's. The setup's processes are
 * mcp-proxy and the server it started (their CPU and memory both): a relay's cost includes the
 * stdio hop.
 */
async function startMcpProxy(): Promise<Target> {
  const port = await childPort();
  const server = [process.execPath, ...childEntry('sdk-stdio-server', 'test/fixtures/sdk-stdio-server.ts')];
  const args = [MCP_PROXY_CLI, '--host', '127.0.0.1', '--port', String(port), '--', ...server];
  const child = startPlainProcess(process.execPath, [...profileFlags(), ...args], { cwd: ROOT });
  try {
    await waitForPort(child, port);
  } catch (err) {
    await stopTree(child);
    throw err;
  }
  return {
    setup: 'mcp-proxy',
    url: new URL('/mcp', `http://127.0.0.1:${port}`),
    pids: () => [child.pid, ...descendantPids(child.pid)],
    stop: () => stopTree(child),
  };
}
