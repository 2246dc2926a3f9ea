// What enforce sends instead of the server's answer to a POST that opened no request, judged by
// the POST-level rules (a PostSubject): a client body that did not parse, answered with no
// JSON-RPC error at all (parse-error-unanswered), becomes the error JSON-RPC 2.0 asks for there,
// -32700 Parse error with id null (no id could be read), on HTTP 400. Nothing else of a POST is
// rewritten: every other POST-level finding is about headers or the shape of the exchange, which
// the proxy cannot put right after the fact.
//
// The decision must come before the server's answer is written: the engine makes it while it
// judges the body (engine/body.ts, engine/post.ts), under enforce only.
import { excerpt } from '../redact/excerpt.ts';
import type { PostSubject } from '../rules/types.ts';
import type { Policy } from '../config/types.ts';
import { blockReply, type PolicedFinding } from './decide.ts';
import type { Decision, ResponseMessage } from './types.ts';

/** POST-level rules a rewrite puts right. */
export const POST_REWRITABLE: readonly string[] = ['parse-error-unanswered'];

/** The -32700 a client gets for a body that did not parse (`upstreamStatus`: what the server sent instead). */
export function parseErrorReply(rule: string, upstreamStatus: number | undefined): ResponseMessage {
  return {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32700, message: 'Parse error', data: { reason: rule, upstreamStatus: upstreamStatus ?? null } },
  };
}

/** What the policy does about a POST as a whole once the server answered: pass, mutate (the -32700), or reject (a block). */
export function decidePost(findings: readonly PolicedFinding[], subject: PostSubject, policy: Policy): Decision {
  if (policy.mode !== 'enforce') return { kind: 'pass' };
  const block = findings.find((f) => f.action === 'block');
  if (block) return { kind: 'reject', ...blockReply(block, 'server', undefined, false), rules: [block.rule] };
  const f = findings.find((x) => x.action === 'rewrite' && POST_REWRITABLE.includes(x.rule));
  if (!f || subject.request.ok) return { kind: 'pass' };
  const before = subject.response?.ok
    ? excerpt(
        subject.response.payload.messages.map((m) => m.value),
        2000,
      )
    : f.evidence;
  return { kind: 'mutate', message: parseErrorReply(f.rule, subject.status), status: 400, rules: [f.rule], settled: [], before };
}
