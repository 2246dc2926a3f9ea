// The `server` record: once per session, what built the server (name and version from its
// initialize, the framework and how sure), written the first time an answer tells (a default
// serverInfo at initialize, else the shape of a later answer: an unknown tool's, a transport's
// refusal). Later and stronger signs still reach the session's fixes, without a second record.
import type { Logger } from 'pino';
import type { FrameworkId } from '../frameworks/frameworks.ts';
import { recognizeFramework, tellsMore, type Recognition } from '../frameworks/recognize.ts';
import { BoundedMap } from '../exchange/bounded-map.ts';
import type { ExchangeSubject } from '../rules/types.ts';
import { DEFAULT_LIMITS, LOG_BOUNDS } from '../config/defaults.ts';
import { peerValue } from '../redact/peer.ts';

interface Known {
  recognition?: Recognition;
  logged?: true;
}

/**
 * Per log (one a proxy), what each session (by its key: its id, or for a stateless server the
 * client's credential) has shown of its server, bounded as the session store is.
 */
const logs = new WeakMap<Logger, BoundedMap<string, Known>>();

function knownOf(logger: Logger): BoundedMap<string, Known> {
  let known = logs.get(logger);
  if (!known) logs.set(logger, (known = new BoundedMap(DEFAULT_LIMITS.maxSessions, DEFAULT_LIMITS.sessionIdleMs)));
  return known;
}

/** Reads an exchange for what built its server; logs the session's `server` record the first time it is told. Returns the framework known so far. */
export function observeServer(logger: Logger, subject: ExchangeSubject | undefined, session: string | null): FrameworkId | undefined {
  if (!subject) return undefined;
  const known = knownOf(logger);
  const now = Date.now();
  const state = known.get(subject.session.key, now) ?? {};
  known.set(subject.session.key, state, now);
  const info = subject.session.serverInfo;
  const next = recognizeFramework(info, subject.response ? [subject.response] : []);
  if (tellsMore(state.recognition, next)) state.recognition = next;
  if (state.recognition && !state.logged) {
    state.logged = true;
    logger.info(
      {
        session,
        name: peerValue(info?.name ?? null, LOG_BOUNDS.stringChars),
        version: peerValue(info?.version ?? null, LOG_BOUNDS.stringChars),
        framework: state.recognition.framework,
        confidence: state.recognition.confidence,
        because: state.recognition.because,
      },
      'server',
    );
  }
  return state.recognition?.framework;
}
