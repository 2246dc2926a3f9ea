// What a reload cannot change: the settings the proxy reads at start (upstream, host guard, limits,
// log level). A reload that changes one says so in its warnings, so nobody waits for a change that
// only a restart makes.
import type { Policy } from './types.ts';

/** The start-only settings of a policy, by their name in the file. */
function startOnly(p: Policy): Record<string, unknown> {
  const { upstream: u, security: s, limits: l } = p;
  return {
    'upstream.url': u.url?.href,
    'upstream.timeout': u.headersTimeoutMs,
    'upstream.idleTimeout': u.bodyTimeoutMs,
    'upstream.connectTimeout': u.connectTimeoutMs,
    'upstream.hostHeader': u.hostHeader,
    'upstream.transport': u.transport,
    'security.allowedHosts': s.allowedHosts,
    'security.allowedOrigins': s.allowedOrigins,
    'limits.maxRequestBody': l.maxRequestBytes,
    'limits.auditBody': l.auditBodyBytes,
    'limits.auditEvent': l.auditEventBytes,
    'limits.maxSessions': l.maxSessions,
    'limits.sessionIdle': l.sessionIdleMs,
    'log.level': p.log.level,
  };
}

/** One warning per start-only setting that differs between the policy in force and the reloaded one. */
export function restartWarnings(previous: Policy, next: Policy): string[] {
  const before = startOnly(previous);
  const after = startOnly(next);
  return Object.keys(after)
    .filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]))
    .map((key) => `${key} changed: it is read at start and takes effect when the process restarts`);
}
