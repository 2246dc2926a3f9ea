// nginx as a plain reverse proxy (Debian's nginx-light), when it is installed: a temp nginx.conf
// with proxy_pass to the upstreams over keep-alive connections, buffering off (SSE goes out as it
// arrives), one worker (one core, like the Node proxies), access log off; with several upstreams,
// each MCP session on one of them (hash on Mcp-Session-Id, as the README's Kubernetes ingress).
// Run in the foreground (`daemon off`) so the benchmark or test owns its PID and stops it by that PID.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childPids, startPlainProcess, waitForPort, type Child } from '../bench/procs.ts';
import { childPort } from './net.ts';

const CANDIDATES = ['/usr/sbin/nginx', '/usr/bin/nginx', '/usr/local/sbin/nginx', '/usr/local/bin/nginx'];

/** The nginx binary, or undefined when nginx is not installed. */
export function findNginx(): string | undefined {
  return CANDIDATES.find((p) => existsSync(p));
}

export interface RunningNginx {
  port: number;
  /** The master's PID and its workers' (for memory). */
  pids(): number[];
  stop(): Promise<void>;
}

function config(dir: string, port: number, upstreams: readonly URL[], hashBy: string, host: string | null): string {
  return `worker_processes 1;
daemon off;
master_process on;
user root;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 16384; multi_accept on; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  keepalive_timeout 75s;
  keepalive_requests 1000000;
  upstream mcp {
    ${upstreams.length > 1 && hashBy !== '' ? `hash ${hashBy} consistent;` : ''}
    ${upstreams.map((u) => `server ${u.host};`).join(' ')}
    keepalive 128;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:${port} backlog=4096;
    client_max_body_size 16m;
    location / {
      proxy_pass http://mcp;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      ${host === null ? '' : `proxy_set_header Host ${host};`}
      proxy_buffering off;
      proxy_request_buffering off;
      proxy_read_timeout 300s;
    }
  }
}
`;
}

/**
 * Starts nginx in front of `upstream` (several: balanced by `hashBy`, Mcp-Session-Id unless told;
 * '' for round robin, each request to the next); `host`: the Host it sends upstream (null: nginx's
 * own default, the upstream block's name `mcp`); resolves once it accepts connections.
 */
export async function startNginx(
  binary: string,
  upstream: URL | readonly URL[],
  hashBy = '$http_mcp_session_id',
  host: string | null = '$host',
): Promise<RunningNginx> {
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-nginx-'));
  const port = await childPort();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, config(dir, port, Array.isArray(upstream) ? upstream : [upstream as URL], hashBy, host));
  const child: Child = startPlainProcess(binary, ['-c', conf, '-p', dir, '-e', join(dir, 'error.log')]);
  const cleanup = async (): Promise<void> => {
    await child.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForPort(child, port, 5000);
  } catch (err) {
    await cleanup();
    throw new Error(`nginx did not start on 127.0.0.1:${port}: ${(err as Error).message}`);
  }
  return { port, pids: () => [child.pid, ...childPids(child.pid)], stop: cleanup };
}
