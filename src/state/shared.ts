// What the proxy needs of a store that shares session state between replicas (--state): the
// facts this replica learns go out, the others' come in, and a session not known here can be read.
import type { SessionFact } from '../exchange/sessions.ts';

export interface SharedSessions {
  /** A fact this replica learned from its own traffic: for the others. */
  publish(fact: SessionFact): void;
  /** What the others learned of session `key`, in the order to apply it (nothing when the store cannot say in time). */
  recall(key: string): Promise<SessionFact[]>;
  /** Where another replica's facts go (set by the proxy). */
  onFact: (fact: SessionFact) => void;
  /** Some of the others' facts may have been missed (set by the proxy): what is known here may be stale. */
  onGap: () => void;
  /** The sessions this replica's traffic used since the last call (set by the proxy): their state is kept alive. */
  used: () => readonly string[];
  close(): Promise<void>;
}
