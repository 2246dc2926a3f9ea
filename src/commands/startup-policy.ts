// What a long-running command starts with: the policy (the file given, or the defaults; a file that
// does not validate stops the start, its errors on stderr as file:line:column), and span export.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { formatPolicyError, loadPolicyFile, readPolicyFile } from '../config/load.ts';
import { PolicyStore } from '../config/store.ts';
import type { Logger } from '../sinks/logger.ts';
import { otlpTracesUrl } from '../sinks/otlp-url.ts';
import type { Tracing } from '../sinks/tracing.ts';
import { defaultPolicy } from '../config/compile.ts';
import { DEFAULT_LIMITS, type Limits } from '../config/defaults.ts';
import type { Policy } from '../config/types.ts';
import { REWRITABLE } from '../rewrite/rewriters.ts';
import { captureProblem } from '../sinks/capture-path.ts';

/** mcp-warden's version (spans and metrics name it). */
export const { version: VERSION } = createRequire(import.meta.url)('../../package.json') as { version: string };

/** Span export when --otlp-endpoint or the OTEL_EXPORTER_OTLP_* variables ask for it; OpenTelemetry loads only then. */
export async function startupTracing(endpoint: string | undefined): Promise<Tracing | undefined> {
  if (otlpTracesUrl(endpoint, process.env) === undefined) return undefined;
  const { Tracing } = await import('../sinks/tracing.ts');
  return Tracing.fromOptions({ endpoint, env: process.env, version: VERSION });
}

/** The shipped enforce.yaml: the default shadow policy (what production would run). */
export const SHIPPED_ENFORCE = fileURLToPath(new URL('../../config/enforce.yaml', import.meta.url));

/** The shadow policy under audit: the file given, else the shipped enforce.yaml. */
export async function shadowPolicy(path: string | undefined): Promise<Policy> {
  const file = path ?? SHIPPED_ENFORCE;
  return (await loadOrStop(file, 'the shadow policy', '')).policy;
}

export async function startupPolicy(path: string | undefined, command: string): Promise<{ policy: Policy; text: string | undefined }> {
  if (path === undefined) return { policy: defaultPolicy(REWRITABLE), text: undefined };
  const loaded = await loadOrStop(path, 'the policy', `; the ${command} did not start`);
  const problem = await captureProblem(loaded.policy);
  if (problem) throw new Error(`${path}: ${problem}; the ${command} did not start`);
  return loaded;
}

/** The store a command serves its policy from (its warnings logged); each reload's result goes to `onReload`. */
export function policyStore(
  start: { policy: Policy; text: string | undefined },
  path: string | undefined,
  logger: Logger,
  onReload: (ok: boolean) => void,
): PolicyStore {
  for (const warning of start.policy.warnings) logger.warn({ policy: start.policy.source, warning }, 'policy warning');
  return new PolicyStore({ path, logger, initial: start.policy, initialText: start.text, rewritable: REWRITABLE, onReload });
}

/**
 * A policy file, or its errors on stderr as file:line:column and an error thrown that says what
 * stopped: `what` the file is ("the policy"), and what did not start.
 */
async function loadOrStop(file: string, what: string, notStarted: string): Promise<{ policy: Policy; text: string | undefined }> {
  const { text, result } = await readPolicyFile(file, { rewritable: REWRITABLE });
  if (!result.ok) {
    for (const e of result.errors) process.stderr.write(`${formatPolicyError(e)}\n`);
    // A file that is not there, or cannot be read, does not fail to validate: it says so.
    const why = text === undefined ? `${what} cannot be read` : `${what} does not validate (see above)`;
    throw new Error(`${file}: ${why}${notStarted}`);
  }
  return { policy: result.policy, text };
}

/** For a one-shot command: the policy file (its warnings on `err`), or undefined with its errors on `err` as file:line:column. */
export async function policyOrErrors(path: string, err: { write(text: string): unknown }): Promise<Policy | undefined> {
  const loaded = await loadPolicyFile(path, { rewritable: REWRITABLE });
  if (!loaded.ok) {
    for (const e of loaded.errors) err.write(`${formatPolicyError(e)}\n`);
    const n = loaded.errors.length;
    err.write(`${path}: ${n} ${n === 1 ? 'error' : 'errors'}\n`);
    return undefined;
  }
  for (const w of loaded.policy.warnings) err.write(`warning: ${w}\n`);
  return loaded.policy;
}

/** The limits both proxies read from the policy at start, the command line's flags winning. */
export function startLimits(
  policy: Policy,
  flags: { maxBody?: number; auditLimit?: number },
): Pick<Limits, 'maxRequestBytes' | 'auditBodyBytes' | 'auditEventBytes' | 'maxSessions' | 'sessionIdleMs'> {
  const l = policy.limits;
  return {
    maxRequestBytes: flags.maxBody ?? l.maxRequestBytes ?? DEFAULT_LIMITS.maxRequestBytes,
    auditBodyBytes: flags.auditLimit ?? l.auditBodyBytes ?? DEFAULT_LIMITS.auditBodyBytes,
    auditEventBytes: l.auditEventBytes ?? DEFAULT_LIMITS.auditEventBytes,
    maxSessions: l.maxSessions ?? DEFAULT_LIMITS.maxSessions,
    sessionIdleMs: l.sessionIdleMs ?? DEFAULT_LIMITS.sessionIdleMs,
  };
}
