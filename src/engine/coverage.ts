// Coverage is a value, like a finding: whether an exchange was judged in full, and if not, why.
// One closed list of reasons; the exchange record carries it (`unjudged`), the log writes such a
// record at warn, mcp_warden_unjudged_total counts it, and the report says "judged N of M".
import { inputSchemaRead } from '../rules/input-validation.ts';
import type { UnsafePattern } from '../rules/schema-regexp.ts';
import { unsafePattern } from '../rules/tool-arguments.ts';
import { outputSchemaRead } from '../rules/tool-catalogue.ts';
import type { ExchangeSubject } from '../rules/types.ts';
import type { ExchangeHttp, JudgedExchange } from './plans.ts';

/**
 * Why MCP traffic crossed without full judging:
 * - `scoped-out`: a path the policy's `scope.passthrough` relays unjudged;
 * - `json-post`: a JSON POST off the MCP paths too large to read and sniff;
 * - `too-large`: a body or SSE event past the audit limit, relayed unread;
 * - `unknown-coding`: a Content-Encoding the proxy cannot undo, relayed unread;
 * - `too-deep`: a message nested past the readers' bounds (or with more error text than they read);
 * - `unsafe-schema`: a tools/call whose answer a rule validates against a tool schema with a
 *   pattern RE2 cannot run (lookaround, a backreference): that check was skipped.
 */
export const UNJUDGED_REASONS = ['scoped-out', 'json-post', 'too-large', 'unknown-coding', 'too-deep', 'unsafe-schema'] as const;
export type UnjudgedReason = (typeof UNJUDGED_REASONS)[number];

/** The rules that say a message was read only in part. */
const PARTLY_READ = new Set(['unreadable-response', 'unreadable-request']);

/** Why an exchange was not judged in full, or undefined when it was. */
export function unjudgedReason(judged: JudgedExchange, http: ExchangeHttp): UnjudgedReason | undefined {
  if (judged.exchange.outcome === 'unaudited') return http.unread ?? 'too-large';
  const partly = (findings: readonly { rule: string }[]): boolean => findings.some((f) => PARTLY_READ.has(f.rule));
  if (partly(judged.findings) || partly(judged.exchange.request.verdict.findings)) return 'too-deep';
  if (judged.subject && skippedSchema(judged.subject)) return 'unsafe-schema';
  return undefined;
}

/** A tool schema the rules would have validated this exchange against, and the pattern that kept them from it. */
export interface SkippedSchema {
  tool: string;
  schema: 'inputSchema' | 'outputSchema';
  /** Cached with the schema's compiled form: the same object for every exchange the schema leaves unjudged. */
  unsafe: UnsafePattern;
}

/** The schema check skipped on this exchange, if one was. */
export function skippedSchema(s: ExchangeSubject): SkippedSchema | undefined {
  const tool = s.request.tool;
  if (tool === undefined) return undefined;
  for (const [schema, value] of [
    ['inputSchema', inputSchemaRead(s)],
    ['outputSchema', outputSchemaRead(s)],
  ] as const) {
    const unsafe = value === undefined ? undefined : unsafePattern(value, s.version);
    if (unsafe) return { tool, schema, unsafe };
  }
  return undefined;
}
