// Audit and enforce differ in one thing: whether what comes is delivered before it is judged
// (audit: the rules cannot change it, so judging stays off its path) or judged first (enforce:
// the plan delivers what the policy decided). Every choice that follows from it is read here.
import type { Policy } from '../config/types.ts';
import { STAGES } from './stages.ts';

/** The one field of an exchange's plan that orders delivery and judging. */
export type Order = 'deliver-first' | 'judge-first';

export const orderOf = (policy: Policy): Order => (policy.mode === 'enforce' ? 'judge-first' : 'deliver-first');

/** What an order means for each thing the proxy relays. */
export interface Ordering {
  /** A client's POST goes upstream before the client's rules judge it. */
  forwardBeforeJudging: boolean;
  /** A server's body or SSE event is written to the client before the server's rules judge it. */
  writeBeforeJudging: boolean;
  /** The policy may act on what it cannot read (a body over the audit limit), before it goes out. */
  decidesUnread: boolean;
  /**
   * A stdio server that exits leaves requests unanswered: each gets an answer from the proxy (the
   * policy's, else the proxy's error). Not under audit: the client sees the pipe close, as it would
   * without the proxy.
   */
  answersAfterExit: boolean;
}

export const ORDERING: Readonly<Record<Order, Ordering>> = {
  'deliver-first': { forwardBeforeJudging: true, writeBeforeJudging: true, decidesUnread: false, answersAfterExit: false },
  'judge-first': { forwardBeforeJudging: false, writeBeforeJudging: false, decidesUnread: true, answersAfterExit: true },
};

/** The stage names a frame passes, with its delivery (`[forward upstream]`, `[write to client]`) where `order` puts it. */
export function stagesInOrder(order: Order, direction: 'request' | 'response'): string[] {
  const names = STAGES.map((s) => s.name);
  const o = ORDERING[order];
  // A request is decoded before it is forwarded even under audit: its messages name its session.
  const at = direction === 'request' ? (o.forwardBeforeJudging ? 1 : names.length) : o.writeBeforeJudging ? 0 : names.length;
  return [...names.slice(0, at), direction === 'request' ? '[forward upstream]' : '[write to client]', ...names.slice(at)];
}

/** The README's drawing of the stages, per mode (test/unit/readme.test.ts keeps them equal). */
export function drawStages(): string {
  const rows: Array<[string, Order]> = [
    ['audit', 'deliver-first'],
    ['enforce', 'judge-first'],
  ];
  return rows
    .flatMap(([mode, order]) =>
      (['request', 'response'] as const).map(
        (direction) =>
          `${mode.padEnd(8)} ${direction.padEnd(9)} ${direction === 'request' ? 'client' : 'server'} ─▶ ${stagesInOrder(order, direction).join(' ─▶ ')} ─▶ log`,
      ),
    )
    .join('\n');
}
