// A line a stdio child wrote to its stdout: a message judged like an SSE event, and the line itself
// judged by stdio's framing rules (not a message at all; a message over several lines). Under
// enforce a line that is not a message does not reach the client (block), and a message over
// several lines goes out on one (rewrite).
import type { ResponseHttp } from '../rules/subjects.ts';
import type { LineSubject } from '../rules/types.ts';
import { ORDERING } from './order.ts';
import type { Judged, Plan } from './plans.ts';
import { postWhere, planned, stagesFor, type EngineCore, type ExchangeState } from './state.ts';
import { serverEvent } from './stream.ts';
import { policed } from './judge.ts';

/** One line of a child's stdout (`lines` > 1: a message the transport put back together from several). */
export interface ServerLine {
  data: string;
  size: number;
  raw: Buffer;
  lines: number;
}

/** What goes to the client for a line: the line as it came, nothing, or this text in its place (one line, no newline). */
export type LineDelivery = { kind: 'as-is' } | { kind: 'drop' } | { kind: 'replace'; text: string };

/** How a stdio message travels, for its records: no HTTP status, no content type. */
export const STDIO_HTTP: ResponseHttp = { status: undefined, contentType: undefined, transport: 'stdio' };

function judgeLine(core: EngineCore, x: ExchangeState, line: ServerLine): { deliver: LineDelivery; judged: Judged[] } {
  const { rewritten, judged, problem } = serverEvent(core, x, line, STDIO_HTTP, STDIO_HTTP, undefined);
  const ctx = stagesFor(core, x);
  const subject: LineSubject = {
    kind: 'line',
    wire: 'stdio',
    version: x.flow.protocolVersion,
    lines: line.lines,
    problem,
    session: x.flow.session,
  };
  const findings = policed(ctx, ctx.engine.evaluate(subject, 'server'), undefined, undefined);
  const enforce = x.policy.mode === 'enforce';
  const block = enforce ? findings.find((f) => f.action === 'block') : undefined;
  const oneLine = enforce && !block && findings.some((f) => f.action === 'rewrite');
  const applied = new Set(block ? [block.rule] : oneLine ? findings.filter((f) => f.action === 'rewrite').map((f) => f.rule) : []);
  if (findings.length > 0) judged.push({ kind: 'findings', findings, where: postWhere(x), applied, counted: true, on: 'line' });
  // Raw newlines in valid JSON are whitespace between tokens: a space in their place keeps the message as it was.
  const deliver: LineDelivery = block
    ? { kind: 'drop' }
    : rewritten !== undefined
      ? { kind: 'replace', text: rewritten }
      : oneLine
        ? { kind: 'replace', text: line.data.replace(/\r?\n/g, ' ') }
        : { kind: 'as-is' };
  return { deliver, judged };
}

/** The plan for a line of the child's stdout, in `x`'s order (audit: relay, then judge). */
export const serverLine = (core: EngineCore, x: ExchangeState, line: ServerLine): Plan<LineDelivery> =>
  planned(ORDERING[x.order].writeBeforeJudging, { kind: 'as-is' }, () => judgeLine(core, x, line));
