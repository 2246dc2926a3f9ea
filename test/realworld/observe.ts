// What a server's three runs show side by side: where audit differs from direct (it must not), what
// the proxy found under audit, and what enforce changed. Each finding and change is keyed by the
// session's step and the rule, the keys verdicts.json gives a verdict for.
import type { LogRecord } from '../helpers/log-capture.ts';
import type { RealServer } from './servers.ts';
import type { Transcript } from './session.ts';

export interface Finding {
  step: string;
  rule: string;
  severity: string;
  message: string;
}

export interface Change {
  step: string;
  direct: string;
  enforced: string;
}

export interface Observed {
  /** Messages (or raw answers) where audit differs from direct, as [direct, audit]. */
  auditDiffers: Array<[string, string]>;
  findings: Finding[];
  changes: Change[];
}

/** Notifications some servers send on a timer, not in answer to the session: left out of the comparison. */
const TIMED = new Set(['notifications/message', 'notifications/resources/updated']);

/** What differs between any two runs of any server: times, UUIDs (session ids, request ids). */
const ALWAYS: readonly RegExp[] = [
  /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?/g,
  /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi,
];

/** The text with what only its run has (folder, port) and each volatile part replaced by a marker. */
function masked(server: RealServer, t: Transcript, text: string): string {
  let out = text;
  for (const own of t.ownText) out = out.replaceAll(own, '<run>');
  for (const re of [...ALWAYS, ...(server.volatile ?? [])]) out = out.replace(re, '<volatile>');
  return out;
}

/** What a run received: answers by id, answers without one and notifications (sorted: their timing against answers varies), raw answers by step. */
interface Received {
  answers: Map<string, string>;
  idless: string[];
  notes: string[];
  raw: Map<string, string>;
}

function received(server: RealServer, t: Transcript): Received {
  const out: Received = { answers: new Map(), idless: [], notes: [], raw: new Map() };
  for (const text of t.received) {
    const m = JSON.parse(text) as { id?: unknown; method?: string };
    if (m.method !== undefined && m.id === undefined) {
      if (!TIMED.has(m.method)) out.notes.push(masked(server, t, text));
    } else if (m.id === undefined || m.id === null) out.idless.push(masked(server, t, text));
    else out.answers.set(`${m.method === undefined ? '' : 'request '}${JSON.stringify(m.id)}`, masked(server, t, text));
  }
  out.notes.sort();
  for (const [step, answer] of t.raw) out.raw.set(step, masked(server, t, answer));
  return out;
}

/** The step of a log record: the step that sent its request id, else what the record names. */
function stepOf(t: Transcript, r: LogRecord): string {
  if (r.id !== undefined && r.id !== null) {
    const step = t.steps.get(JSON.stringify(r.id));
    if (step) return step;
    if (r.id === 'warden-not-a-request') return 'malformed input';
  }
  // Without an id: the malformed input (no request could be read), or a notification.
  return r.method === undefined ? 'malformed input' : `${String(r.method)} (no id)`;
}

/** [key, a's, b's] wherever two keyed lists differ. */
function differences(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): Array<[string, string, string]> {
  const out: Array<[string, string, string]> = [];
  for (const key of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(key) ?? '(nothing)';
    const y = b.get(key) ?? '(nothing)';
    if (x !== y) out.push([key, x, y]);
  }
  return out;
}

const listed = (items: readonly string[]): Map<string, string> => new Map(items.map((v, i) => [String(i), v]));

export function observe(server: RealServer, direct: Transcript, audit: Transcript, enforce: Transcript): Observed {
  const d = received(server, direct);
  const a = received(server, audit);
  const e = received(server, enforce);
  const auditDiffers = [
    ...differences(d.answers, a.answers),
    ...differences(listed(d.idless), listed(a.idless)),
    ...differences(listed(d.notes), listed(a.notes)),
    ...differences(d.raw, a.raw),
  ].map(([, x, y]): [string, string] => [x, y]);
  const findings = audit.records
    .filter((r) => r.msg === 'violation')
    .map((r) => ({ step: stepOf(audit, r), rule: String(r.rule), severity: String(r.severity), message: String(r.message) }));
  const stepOfKey = (key: string): string => enforce.steps.get(key) ?? key;
  const changes: Change[] = [
    ...differences(d.answers, e.answers).map(([key, x, y]) => ({ step: stepOfKey(key), direct: x, enforced: y })),
    ...differences(listed(d.idless), listed(e.idless)).map(([, x, y]) => ({ step: 'an answer without id', direct: x, enforced: y })),
    ...differences(d.raw, e.raw).map(([step, x, y]) => ({ step, direct: x, enforced: y })),
  ];
  return { auditDiffers, findings, changes };
}
