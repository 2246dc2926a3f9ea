// The setups measured side by side: a direct connection, http-proxy-3, nginx, mcp-warden in audit
// and in enforce mode. Each proxy runs in its own process; `pids()` says whose memory is the setup's.
import { readFileSync } from 'node:fs';
import { startNginx, findNginx } from '../helpers/nginx.ts';
import { profileFlags, startChild, type Child } from './procs.ts';

export const SETUPS = ['direct', 'http-proxy-3', 'nginx', 'audit', 'enforce'] as const;
export type SetupName = (typeof SETUPS)[number];
/** A setup, or the experiment that prices mcp-warden's transport alone (proxy-child.ts). */
export type TargetKind = SetupName | 'undici-floor' | 'dispatch-floor';

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

/** Starts `setup` in front of `upstream`; nginx resolves to undefined when it is not installed. */
export async function startTarget(setup: TargetKind, upstream: URL, opts: StartOptions = {}): Promise<Target | undefined> {
  if (setup === 'direct') return { setup, url: upstream, pids: () => [], stop: async () => {} };
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
