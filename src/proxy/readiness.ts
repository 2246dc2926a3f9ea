// What /readyz answers: whether this process can serve (listening, not stopping, and whatever else
// a command requires), never the health of what lies behind it: the upstream has /upstreamz and
// mcp_warden_upstream_up of its own. A command lists its conditions; the first that fails is the answer.
import { upstreamReachable } from './upstream-probe.ts';

export interface ReadyCondition {
  /** What /readyz says while the condition fails, e.g. `draining`. */
  status: string;
  holds(): boolean | Promise<boolean>;
}

/** The status of the first condition that fails, or undefined when the process is ready. */
export async function firstUnready(conditions: readonly ReadyCondition[]): Promise<string | undefined> {
  for (const condition of conditions) if (!(await condition.holds())) return condition.status;
  return undefined;
}

/** `--ready-needs-upstream`: not ready while the upstream refuses connections (the behaviour before /upstreamz). */
export const upstreamAccepts = (upstream: URL): ReadyCondition => ({
  status: 'upstream unreachable',
  holds: () => upstreamReachable(upstream),
});
