// Coverage is a value, like a finding: whether an exchange was judged in full, and if not, why.
// One closed list of reasons; the exchange record carries it (`unjudged`), the log writes such a
// record at warn, mcp_warden_unjudged_total counts it, and the report says "judged N of M".
import type { ExchangeHttp, JudgedExchange } from './plans.ts';

/**
 * Why MCP traffic crossed without full judging:
 * - `scoped-out`: a path the policy's `scope.passthrough` relays unjudged;
 * - `json-post`: a JSON POST off the MCP paths too large to read and sniff;
 * - `too-large`: a body or SSE event past the audit limit, relayed unread;
 * - `unknown-coding`: a Content-Encoding the proxy cannot undo, relayed unread;
 * - `too-deep`: a message nested past the readers' bounds (or with more error text than they read).
 */
export const UNJUDGED_REASONS = ['scoped-out', 'json-post', 'too-large', 'unknown-coding', 'too-deep'] as const;
export type UnjudgedReason = (typeof UNJUDGED_REASONS)[number];

/** The rules that say a message was read only in part. */
const PARTLY_READ = new Set(['unreadable-response', 'unreadable-request']);

/** Why an exchange was not judged in full, or undefined when it was. */
export function unjudgedReason(judged: JudgedExchange, http: ExchangeHttp): UnjudgedReason | undefined {
  if (judged.exchange.outcome === 'unaudited') return http.unread ?? 'too-large';
  const partly = (findings: readonly { rule: string }[]): boolean => findings.some((f) => PARTLY_READ.has(f.rule));
  if (partly(judged.findings) || partly(judged.exchange.request.verdict.findings)) return 'too-deep';
  return undefined;
}
