// Reading one line of a capture (src/sinks/capture.ts) for replay: the record it holds, or why it
// holds none (not JSON, another capture version, a field of the wrong shape). Never throws.
import { isObject } from '../codec/json-value.ts';
import { CAPTURE_VERSION, type CaptureRecord } from '../sinks/capture.ts';

const isStringOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';
const TRANSPORTS: ReadonlySet<unknown> = new Set(['json', 'sse', 'get-sse', 'stdio', 'none']);
const BODY_PROBLEMS: ReadonlySet<unknown> = new Set(['empty', 'not-utf8', 'html', 'not-json', 'not-jsonrpc']);

/** A capture record, or why a line holds none (`log`: it is one of the proxy's log records instead). */
export type CaptureLine = { ok: true; record: CaptureRecord } | { ok: false; reason: string; log?: true };

/** The record a line holds, or why it holds none. */
export function parseCaptureLine(text: string): CaptureLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `not JSON (${(err as Error).message})` };
  }
  return captureRecordIn(value);
}

/** The capture record a parsed line holds, or why it holds none (a reader that parsed the line already). */
export function captureRecordIn(value: unknown): CaptureLine {
  if (!isObject(value)) return { ok: false, reason: 'not a capture record (not a JSON object)' };
  // pino's record: a numeric level and a message, where a capture record has its version.
  if (value.v === undefined && typeof value.level === 'number' && typeof value.msg === 'string')
    return { ok: false, reason: `a log record (${JSON.stringify(value.msg.slice(0, 40))}), not a capture record`, log: true };
  if (value.v !== CAPTURE_VERSION) {
    return {
      ok: false,
      reason: `capture version ${JSON.stringify(value.v) ?? 'missing'}; this mcp-warden reads version ${CAPTURE_VERSION}`,
    };
  }
  const shape = shapeProblem(value);
  return shape ? { ok: false, reason: `not a capture record (${shape})` } : { ok: true, record: value as unknown as CaptureRecord };
}

const isArgumentError = (e: unknown): boolean =>
  isObject(e) && typeof e.path === 'string' && typeof e.message === 'string' && (e.param === undefined || typeof e.param === 'string');
const isEcho = (e: unknown): boolean =>
  isObject(e) &&
  Array.isArray(e.at) &&
  e.at.every((k) => typeof k === 'string' || typeof k === 'number') &&
  Number.isInteger(e.start) &&
  Number.isInteger(e.end);

/** Whether a record's request facts have the shape the rules read (rules/types.ts RequestFacts). */
function areFacts(f: unknown): boolean {
  if (!isObject(f)) return false;
  if (f.aboutArguments !== undefined && f.aboutArguments !== true) return false;
  if (f.argumentErrors !== undefined && !(Array.isArray(f.argumentErrors) && f.argumentErrors.every(isArgumentError))) return false;
  return f.echoes === undefined || (Array.isArray(f.echoes) && f.echoes.every(isEcho));
}

function shapeProblem(v: Record<string, unknown>): string | undefined {
  if (typeof v.time !== 'string') return 'time is not a string';
  if (!isStringOrNull(v.session)) return 'session is not a string or null';
  if (!isStringOrNull(v.protocolVersion)) return 'protocolVersion is not a string or null';
  if (v.principal !== undefined && typeof v.principal !== 'string') return 'principal is not a string';
  if (v.wire !== undefined && v.wire !== 'sse' && v.wire !== 'stdio') return 'wire is not "sse" or "stdio"';
  const req = v.request;
  if (!isObject(req)) return 'request is not an object';
  if (req.from !== 'client' && req.from !== 'server') return 'request.from is not "client" or "server"';
  if (!isObject(req.headers) || !Object.values(req.headers).every((h) => typeof h === 'string'))
    return 'request.headers is not an object of strings';
  if (req.facts !== undefined && !areFacts(req.facts)) return 'request.facts is not a set of request facts';
  const res = v.response;
  if (!isObject(res)) return 'response is not an object';
  if (typeof res.outcome !== 'string') return 'response.outcome is not a string';
  if (res.status !== null && typeof res.status !== 'number') return 'response.status is not a number or null';
  if (!isStringOrNull(res.contentType)) return 'response.contentType is not a string or null';
  if (!TRANSPORTS.has(res.transport)) return 'response.transport is not json, sse, get-sse, stdio or none';
  if (!('message' in res)) return 'response.message is missing';
  if (
    res.bodyProblem !== null &&
    !(isObject(res.bodyProblem) && BODY_PROBLEMS.has(res.bodyProblem.problem) && typeof res.bodyProblem.excerpt === 'string')
  ) {
    return 'response.bodyProblem is not a body problem or null';
  }
  if (!Array.isArray(res.unmatched)) return 'response.unmatched is not an array';
  if (!isStringOrNull(res.proxyError)) return 'response.proxyError is not a string or null';
  return undefined;
}
