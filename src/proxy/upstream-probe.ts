// Whether the upstream accepts a TCP connection: what /upstreamz answers, mcp_warden_upstream_up
// reports, and /readyz waits for under --ready-needs-upstream.
import { connect } from 'node:net';

/** How long a probe waits for the upstream to accept. */
export const UPSTREAM_PROBE_TIMEOUT_MS = 1000;

/** Whether a TCP connection to the upstream opens within `timeoutMs`. */
export function upstreamReachable(url: URL, timeoutMs = UPSTREAM_PROBE_TIMEOUT_MS): Promise<boolean> {
  return new Promise((resolve) => {
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const socket = connect({ host: url.hostname.replace(/^\[|\]$/g, ''), port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true)).once('error', () => done(false));
  });
}
