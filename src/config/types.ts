// The compiled policy: what the proxy consults on every finding. The YAML file (config/*.yaml,
// validated against config/policy.schema.json) is compiled into this form once per load.
import type { Action, Severity } from '../verdicts.ts';
import type { Limits } from './defaults.ts';

export type { Action };

export type Mode = 'audit' | 'enforce';

/**
 * What the unknown-tool rules expect for a tools/call of a tool the server does not have. `spec`:
 * what the session's protocol version says (JSON-RPC error -32602 in every version so far).
 * `iserror`: SEP-2145 (open) as well, an isError result that says the tool is unknown.
 */
export type UnknownToolAnswer = 'spec' | 'iserror';

/** The decision for one finding of one rule on one exchange. */
export interface RuleSetting {
  action: Action;
  severity: Severity;
}

/** Where a finding was seen, as far as the policy scopes rules. */
export interface FindingScope {
  rule: string;
  group: string;
  /** The rule's own severity, used unless the policy overrides it. */
  severity: Severity;
  method: string | undefined;
  tool: string | undefined;
}

export interface Policy {
  /** Where it came from: a file path, an environment, or "(built-in defaults)". */
  source: string;
  mode: Mode;
  /** The action and severity for a finding; `rewrite`/`block` are returned as configured even in audit mode (the caller applies them only in enforce mode). */
  setting(scope: FindingScope): RuleSetting;
  /** Upstream settings the file gives (the command line wins over them). */
  upstream: {
    url?: URL;
    headersTimeoutMs?: number;
    bodyTimeoutMs?: number;
    connectTimeoutMs?: number;
    hostHeader?: 'client' | 'upstream';
    transport?: 'auto' | 'sse' | 'streamable-http';
  };
  /** The proxy's Host/Origin guard (read at start; the command line wins). */
  security: { allowedHosts?: string[]; allowedOrigins?: string[] };
  /**
   * `passthrough`: paths relayed unjudged even when they carry JSON-RPC (exact, or a prefix ending
   * in `*`). `unjudged`: under enforce, what cannot be judged in full is relayed or blocked.
   */
  scope: { passthrough: readonly string[]; unjudged: 'relay' | 'block' };
  limits: Partial<Pick<Limits, 'maxRequestBytes' | 'auditBodyBytes' | 'auditEventBytes' | 'maxSessions' | 'sessionIdleMs'>>;
  log: {
    level?: string;
    /** Tool arguments on exchange records: left out, redacted values (default), or as sent. */
    arguments: 'off' | 'redacted' | 'full';
  };
  /** What replaces a leaked internal in a rewritten message. */
  redactionMarker: string;
  /** Which answers the rules expect where the field disputes the spec (see UnknownToolAnswer). */
  answers: { unknownTool: UnknownToolAnswer };
  /** Extra patterns: leaks by rule id, silent-success failures; `replaceSilentSuccess` drops the built-in ones. */
  patterns: { leaks: Array<{ rule: string; re: RegExp }>; silentSuccess: RegExp[]; replaceSilentSuccess: boolean };
  /** Where to write the capture of exchanges (JSON lines, secrets redacted); off when undefined. */
  capture: { path: string } | undefined;
  /** Problems that did not stop the load (e.g. `rewrite` for a rule that has no rewrite). */
  warnings: string[];
}
