// The policy in force, swapped atomically on reload. An exchange calls current() once at its start
// and keeps that object until it ends: that is how in-flight exchanges finish under the policy
// they started with (a Policy is frozen; a reload makes a new one, never changes the old).
// A reload that does not validate is logged and changes nothing. A file event's reload waits for
// the file to settle first: a file written in place in pieces is never read half-way.
import { watch, type FSWatcher } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Logger } from '../sinks/logger.ts';
import { defaultPolicy } from './compile.ts';
import { POLICY_RELOAD_BOUNDS } from './defaults.ts';
import {
  formatPolicyError,
  loadPolicyRead,
  readPolicyFile as readPolicy,
  readPolicyText,
  type LoadOptions,
  type PolicyError,
  type PolicyRead,
} from './load.ts';
import { restartWarnings } from './restart.ts';
import type { Policy } from './types.ts';

export interface PolicyStoreOptions {
  /** The policy file; without one the store holds the built-in defaults and reload() keeps them. */
  path?: string;
  logger: Logger;
  /** The policy in force at the start (from PolicyStore.open, or defaultPolicy()). */
  initial: Policy;
  /** The file's text `initial` was read from: a file event that leaves it unchanged reloads nothing. */
  initialText?: string;
  /** Passed to the loader: rule ids that have a rewriter. */
  rewritable?: ReadonlySet<string>;
  /** Quiet time after the last file event before the file is read (default 100 ms). */
  debounceMs?: number;
  /** A file event's read is taken once a second read this much later finds the same text (default 250 ms). */
  settleMs?: number;
  /** Told how each reload of the file ended: swapped in, or rejected (metrics count them). */
  onReload?: (ok: boolean) => void;
}

export type ReloadReason = 'signal' | 'file' | 'api';

export interface ReloadResult {
  ok: boolean;
  errors?: PolicyError[];
}

const REWATCH_MS = 250;

export class PolicyStore {
  readonly #options: PolicyStoreOptions;
  #policy: Policy;
  /** The text the policy in force was loaded from: a file event with the same text is not a change. */
  #text: string | undefined;
  /** Reloads run one after another, so the last one to start is the last one to swap. */
  #queue: Promise<unknown> = Promise.resolve();
  #watcher: FSWatcher | undefined;
  #debounce: NodeJS.Timeout | undefined;
  #rewatch: NodeJS.Timeout | undefined;
  #watching = false;
  #listeners = new Set<(policy: Policy, previous: Policy) => void>();

  constructor(options: PolicyStoreOptions) {
    this.#options = options;
    this.#policy = options.initial;
    this.#text = options.initialText;
  }

  /** Loads `path` (or the defaults without one) and returns a store holding it, or the errors that stop the start. */
  static async open(
    options: Omit<PolicyStoreOptions, 'initial'>,
  ): Promise<{ ok: true; store: PolicyStore } | { ok: false; errors: PolicyError[] }> {
    if (options.path === undefined) return { ok: true, store: new PolicyStore({ ...options, initial: defaultPolicy() }) };
    const read = await readPolicy(options.path, loadOptions(options));
    if (!read.result.ok) return { ok: false, errors: read.result.errors };
    return { ok: true, store: new PolicyStore({ ...options, initial: read.result.policy, initialText: read.text }) };
  }

  /** The policy in force. Take it once per exchange and keep it. */
  current(): Policy {
    return this.#policy;
  }

  /** The text of the file the policy in force was loaded from; undefined for the built-in defaults. */
  text(): string | undefined {
    return this.#text;
  }

  /** Called after each successful swap (e.g. to apply a new log level). Returns the unsubscribe function. */
  onChange(listener: (policy: Policy, previous: Policy) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Reads and validates the file again; swaps it in if it validates, keeps the one in force if not. */
  reload(reason: ReloadReason = 'api'): Promise<ReloadResult> {
    const next = this.#queue.then(() => this.#reload(reason));
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #reload(reason: ReloadReason): Promise<ReloadResult> {
    const { path, logger } = this.#options;
    if (path === undefined) {
      logger.info({ reason }, 'no policy file: the built-in defaults stay in force');
      return { ok: true };
    }
    const read = reason === 'file' ? await this.#settled(path) : await readPolicyText(path);
    if (read === undefined) return { ok: false, errors: [] };
    const { text, result } = loadPolicyRead(read, path, loadOptions(this.#options));
    if (!result.ok) {
      logger.error({ policy: path, reason, errors: result.errors.map(formatPolicyError) }, 'policy rejected');
      this.#options.onReload?.(false);
      return { ok: false, errors: result.errors };
    }
    if (reason === 'file' && text === this.#text) {
      logger.debug({ policy: path, reason }, 'policy unchanged');
      return { ok: true };
    }
    const previous = this.#policy;
    this.#policy = result.policy;
    this.#text = text;
    const warnings = [...result.policy.warnings, ...restartWarnings(previous, result.policy)];
    logger.info({ policy: path, reason, mode: result.policy.mode, warnings }, 'policy reloaded');
    this.#options.onReload?.(true);
    for (const listener of this.#listeners) {
      try {
        listener(result.policy, previous);
      } catch (err) {
        logger.error({ err }, 'policy listener failed');
      }
    }
    return { ok: true };
  }

  /**
   * The file once two reads a settle period apart agree (a writer writing it in place in pieces
   * has finished), or undefined when it is still changing after POLICY_RELOAD_BOUNDS.settleReads periods: then the
   * policy in force stays, said at warn, and the writer's next change reads it again.
   */
  async #settled(path: string): Promise<PolicyRead | undefined> {
    const settleMs = this.#options.settleMs ?? POLICY_RELOAD_BOUNDS.settleMs;
    let last = await readPolicyText(path);
    let warned = false;
    for (let i = 0; i < POLICY_RELOAD_BOUNDS.settleReads; i++) {
      await new Promise((r) => setTimeout(r, settleMs));
      const again = await readPolicyText(path);
      const same = 'text' in last ? 'text' in again && again.text === last.text : 'error' in again;
      if (same) return again;
      if (!warned) {
        warned = true;
        this.#options.logger.warn(
          { policy: path, settleMs },
          'policy file changed while it was read: the policy in force stays until the file settles (save by rename to swap at once)',
        );
      }
      last = again;
    }
    this.#options.logger.warn(
      { policy: path, settleMs: settleMs * POLICY_RELOAD_BOUNDS.settleReads },
      'policy file did not settle: the policy in force stays',
    );
    return undefined;
  }

  /**
   * Reloads when the file changes (debounced). An editor that saves by writing a new file and
   * renaming it over the old one leaves the watcher on a file that is gone: the store then
   * watches the path again (retrying until the file is back).
   */
  watch(): void {
    if (this.#watching || this.#options.path === undefined) return;
    this.#watching = true;
    this.#startWatcher();
  }

  #startWatcher(): void {
    const path = this.#options.path!;
    this.#watcher?.close();
    this.#watcher = undefined;
    try {
      const watcher = watch(path, { persistent: false }, (event) => {
        if (event === 'rename') this.#scheduleRewatch();
        this.#schedule();
      });
      watcher.on('error', () => this.#scheduleRewatch());
      this.#watcher = watcher;
    } catch {
      // The file is not there (mid-replace, or deleted): try again shortly.
      this.#scheduleRewatch();
    }
  }

  #scheduleRewatch(): void {
    if (!this.#watching || this.#rewatch) return;
    this.#watcher?.close();
    this.#watcher = undefined;
    this.#rewatch = setTimeout(() => {
      this.#rewatch = undefined;
      if (!this.#watching) return;
      this.#startWatcher();
      if (this.#watcher) this.#schedule();
    }, REWATCH_MS);
    this.#rewatch.unref();
  }

  #schedule(): void {
    if (!this.#watching) return;
    clearTimeout(this.#debounce);
    this.#debounce = setTimeout(() => {
      this.#debounce = undefined;
      if (this.#watching) void this.reload('file');
    }, this.#options.debounceMs ?? 100);
    this.#debounce.unref();
  }

  /** Stops watching. Reloads already started still finish. */
  close(): void {
    this.#watching = false;
    this.#watcher?.close();
    this.#watcher = undefined;
    clearTimeout(this.#debounce);
    clearTimeout(this.#rewatch);
    this.#debounce = undefined;
    this.#rewatch = undefined;
  }
}

function loadOptions(options: Pick<PolicyStoreOptions, 'path' | 'rewritable'>): LoadOptions {
  return {
    ...(options.rewritable ? { rewritable: options.rewritable } : {}),
    ...(options.path ? { baseDir: dirname(resolve(options.path)) } : {}),
  };
}
