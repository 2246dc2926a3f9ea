// What the proxy needs of a store that shares session state between processes: the facts this
// process learns go out, the others' come in, and a session not known here can be read. Two
// stores: the primary's relay of --workers (worker-relay.ts) and Redis for a fleet (--state,
// redis-state.ts); shareSessions() wires either to the proxy's sessions, one path for both.
import { STATE_BOUNDS } from '../config/defaults.ts';
import type { ClaimIds } from '../exchange/claims.ts';
import type { SessionFact, SessionStore } from '../exchange/sessions.ts';

export interface SharedSessions {
  /** A fact this process learned from its own traffic: for the others. */
  publish(fact: SessionFact): void;
  /**
   * What the others learned of session `key`, in the order to apply it; undefined when the store
   * cannot say in time. Absent where every fact arrives as it is learned (the primary's relay):
   * then a request reads nothing first.
   */
  recall?(key: string): Promise<SessionFact[] | undefined>;
  /**
   * Claims client requests' ids while they are open (exchange/claims.ts), so that one in flight on
   * another process is known. Absent where the store cannot tell (the primary's relay).
   */
  claim?: ClaimIds;
  /** Where another process's facts go (set by shareSessions). */
  onFact: (fact: SessionFact) => void;
  /** Some of the others' facts may have been missed (set by shareSessions): what is known here may be stale. */
  onGap: () => void;
  /** Sessions the others' traffic used (set by shareSessions): as recent here. */
  onUsedElsewhere: (keys: readonly string[]) => void;
  /** The sessions this process's traffic used since the last call (set by shareSessions): their state is kept alive. */
  used: () => readonly string[];
  /** What this process knows of a session, as facts (set by shareSessions): written again where a store lost them. */
  known?: (key: string) => SessionFact[];
  close(): Promise<void>;
}

/** Sessions marked to be read again (the newest): more than a process remembers is a flood of facts, not sessions in use. */
const MAX_REREAD = STATE_BOUNDS.reread;

/**
 * Wires `sessions` to `state`: what they learn is published, what the others learn is applied,
 * the sessions used here are reported, those used elsewhere kept recent. Returns what a request
 * calls before it is judged, when the store can be read: a session not known here (or known from
 * before a gap) is read from the store first.
 */
export function shareSessions(
  sessions: SessionStore,
  state: SharedSessions,
  now: () => number,
): ((key: string) => Promise<void>) | undefined {
  /** Sessions known here when the others' facts may have been missed: read again at their next request. */
  const reread = new Set<string>();
  sessions.share = (fact) => state.publish(fact);
  state.onFact = (fact) => {
    // A session first heard of by a page of its catalogue: what came before (its initialize) went
    // out before this process listened (it started, or subscribed, later), so it is read from the
    // store at the session's next request rather than judged without.
    if (fact.kind === 'ended') reread.delete(fact.key);
    else if (fact.kind === 'tools' && !sessions.find(fact.key, now())) {
      reread.add(fact.key);
      if (reread.size > MAX_REREAD) reread.delete(reread.values().next().value!);
    }
    sessions.learn(fact, now(), undefined, true);
  };
  state.onGap = () => {
    reread.clear();
    for (const key of sessions.keys()) reread.add(key);
  };
  state.onUsedElsewhere = (keys) => sessions.touch(keys, now());
  sessions.trackTouches();
  state.used = () => sessions.takeTouched();
  state.known = (key) => sessions.factsOf(key);
  const recall = state.recall?.bind(state);
  if (!recall) return undefined;
  return async (key) => {
    const marked = reread.delete(key);
    if (sessions.find(key, now()) && !marked) return;
    const facts = await recall(key);
    // Not read (the store slow or away): a session marked to be read again stays marked.
    if (facts === undefined) {
      if (marked) reread.add(key);
      return;
    }
    for (const fact of facts) sessions.learn(fact, now(), undefined, true);
  };
}
