// The shared session state of `--workers` without `--state`: the primary relays what each worker
// learns of a session (a SessionFact) to every worker, the sender too, so a session whose requests
// land on different workers is judged as on one. The same interface as the Redis store
// (shared.ts), so the proxy has one path for both:
//   - the primary's order is the one order: a worker that applied its own fact before a peer's
//     that the primary ordered first applies its own again when it comes back (two tools/list of
//     one session answered at once leave every worker with the same catalogue, the later one);
//   - every TOUCH_EVERY_MS a worker sends the sessions its traffic used, and the others touch them:
//     a session busy on one worker stays recent on all (least recently used goes first, idle ones
//     expire), within that interval.
// Nothing is lost on the way (IPC), and every worker hears every fact as it is learned: there is
// nothing to recall (a request reads nothing first), and never a gap.
import cluster from 'node:cluster';
import type { SessionFact } from '../exchange/sessions.ts';
import type { Logger } from '../sinks/logger.ts';
import type { SharedSessions } from './shared.ts';

export const FACT = 'mcp-warden:session-fact';
export const TOUCHED = 'mcp-warden:sessions-touched';
/** How often a worker tells the others which sessions its traffic used. */
const TOUCH_EVERY_MS = 250;

export interface FactMessage {
  type: typeof FACT;
  fact: SessionFact;
  /** The worker that learned it (set by the primary). */
  origin?: number;
}

export interface TouchedMessage {
  type: typeof TOUCHED;
  keys: string[];
}

/** A guard for the IPC message of `type`. */
export const typed =
  <M>(type: string) =>
  (m: unknown): m is M =>
    typeof m === 'object' && m !== null && (m as { type?: unknown }).type === type;
export const isFact = typed<FactMessage>(FACT);
export const isTouched = typed<TouchedMessage>(TOUCHED);

export class WorkerRelay implements SharedSessions {
  onFact: (fact: SessionFact) => void = () => {};
  onGap: () => void = () => {};
  onUsedElsewhere: (keys: readonly string[]) => void = () => {};
  used: () => readonly string[] = () => [];
  /**
   * This worker's facts on their way through the primary, per session, as learned (what was sent
   * may lack what could not be serialised), and the sessions where a peer's fact came first
   * meanwhile (the primary ordered it before ours: ours applies again, as this worker learned it).
   */
  private readonly pending = new Map<string, SessionFact[]>();
  private readonly overtaken = new Set<string>();
  /** A fact could not be sent (said once). */
  private warned = false;
  private readonly touches: NodeJS.Timeout;
  private readonly listener = (m: unknown): void => this.received(m);

  constructor(private readonly logger: Logger) {
    process.on('message', this.listener);
    this.touches = setInterval(() => {
      const keys = this.used();
      if (keys.length > 0) process.send?.({ type: TOUCHED, keys: [...keys] } satisfies TouchedMessage, undefined, {}, () => {});
    }, TOUCH_EVERY_MS);
    this.touches.unref();
  }

  /**
   * Sends a fact this worker learned to the primary. One that cannot be sent (a value nested too
   * deep to serialise) stays this worker's, logged once, never thrown into the exchange that
   * taught it; an initialize's version (and its session) still goes without the capabilities.
   */
  publish(fact: SessionFact): void {
    const sent =
      this.send(fact) ||
      (fact.kind === 'initialized' && this.send({ ...fact, serverCapabilities: undefined, clientCapabilities: undefined }));
    if (!sent) return;
    const mine = this.pending.get(fact.key);
    if (mine) mine.push(fact);
    else this.pending.set(fact.key, [fact]);
  }

  async close(): Promise<void> {
    clearInterval(this.touches);
    process.off('message', this.listener);
  }

  private send(fact: SessionFact): boolean {
    try {
      process.send?.({ type: FACT, fact } satisfies FactMessage, undefined, {}, () => {});
      return true;
    } catch (err) {
      if (!this.warned)
        this.logger.warn({ fact: fact.kind, err: (err as Error).message }, 'a session fact could not be shared with the other workers');
      this.warned = true;
      return false;
    }
  }

  private received(m: unknown): void {
    if (isTouched(m)) return void this.onUsedElsewhere(m.keys);
    if (!isFact(m)) return;
    const { key } = m.fact;
    const mine = this.pending.get(key);
    if (m.origin !== cluster.worker?.id) {
      this.onFact(m.fact);
      if (mine) this.overtaken.add(key);
      return;
    }
    // Our own fact, back in the primary's order: already applied, unless a peer's came in between.
    const learned = mine?.shift() ?? m.fact;
    if (this.overtaken.has(key)) this.onFact(learned);
    if (mine && mine.length > 0) return;
    this.pending.delete(key);
    this.overtaken.delete(key);
  }
}
