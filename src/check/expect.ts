// What a probe's expectation reads (the answer, boiled down), the building blocks probes state
// their expectations with, and the one-line description of what came back ("got").
import type { IncomingHttpHeaders } from 'node:http';
import type { Message } from '../codec/jsonrpc.ts';
import { asRecord } from '../codec/json-value.ts';
import { excerpt } from '../redact/excerpt.ts';
import { describeError, type ErrorMessage } from '../rules/read.ts';
import type { BodyProblem, Report } from '../rules/types.ts';
import type { HttpAnswer } from './http.ts';
import type { Observed } from './judge.ts';

export interface Answer {
  status: number | undefined;
  /** How it travelled when not as the POST's response (legacy SSE stream, stdio). */
  wire?: HttpAnswer['wire'];
  contentType: string | undefined;
  headers: IncomingHttpHeaders;
  bytes: number;
  /** The body was cut at the byte cap (and not judged). */
  truncated: boolean;
  failure: HttpAnswer['failure'];
  /** The message that answered the probe's request (by id). */
  response: Message | undefined;
  /** The error that answered: the response when it is one, else an id-less error on the exchange. */
  error: ErrorMessage | undefined;
  /** The result object, when a result answered. */
  result: Record<string, unknown> | undefined;
  bodyProblem: BodyProblem | undefined;
  messages: readonly Message[];
}

export interface Expectation {
  /** One line for the report's "expected" column. */
  text: string;
  /** What differs from the expectation (nothing when it is met); severity error unless a report says otherwise. */
  check(a: Answer): Report[];
  /** The fix, in one line, when the expectation is not met. */
  fix: string;
}

const isError = (m: Message): m is ErrorMessage => m.kind === 'error';

export function answerOf(o: Observed): Answer {
  const response = o.exchanges.find((j) => j.completed.request.from === 'client')?.completed.response;
  const idless = [...o.unmatched, ...o.messages].find((m): m is ErrorMessage => isError(m) && (m.id === null || m.id === undefined));
  return {
    status: o.answer.status,
    wire: o.answer.wire,
    contentType: o.answer.contentType,
    headers: o.answer.headers,
    bytes: o.answer.body.length,
    truncated: o.answer.truncated,
    failure: o.answer.failure,
    response,
    error: response?.kind === 'error' ? response : (idless ?? o.messages.find(isError)),
    result: response?.kind === 'result' ? asRecord(response.result) : undefined,
    bodyProblem: o.bodyProblem,
    messages: o.messages,
  };
}

const PROBLEM: Readonly<Record<BodyProblem['problem'], string>> = {
  empty: 'an empty body',
  'not-utf8': 'a body that is not UTF-8',
  html: 'an HTML page',
  'not-json': 'a body that is not JSON',
  'not-jsonrpc': 'JSON that is not JSON-RPC',
};

/** What came back, in one line: `HTTP 404, error -32601 "Method not found"`. */
export function gotText(a: Answer): string {
  if (a.failure && a.status === undefined)
    return a.failure.reason === 'timeout' ? 'no answer (timed out)' : `no answer (${a.failure.reason}: ${excerpt(a.failure.detail, 60)})`;
  const parts = [a.status === undefined && a.wire ? (a.wire === 'stdio' ? 'stdio' : 'SSE event') : `HTTP ${a.status}`];
  const location = a.headers.location;
  if (a.status !== undefined && a.status >= 300 && a.status < 400 && location)
    parts.push(`redirect to ${excerpt(location, 60)} (not followed)`);
  else if (a.truncated)
    parts.push(`more than ${a.bytes} bytes${a.contentType ? ` of ${a.contentType}` : ''} (cut at --max-bytes, not judged)`);
  else if (a.result) parts.push(a.result.isError === true ? `isError result ${excerpt(resultText(a.result), 50)}` : 'result');
  else if (a.error) parts.push(`error ${describeError(a.error)}${a.error === a.response ? '' : ' (id null)'}`);
  else if (a.bodyProblem)
    parts.push(
      a.bodyProblem.problem === 'empty' ? 'no body' : `${PROBLEM[a.bodyProblem.problem]}${a.contentType ? ` (${a.contentType})` : ''}`,
    );
  else if (a.bytes === 0) parts.push('no body');
  else if (a.messages.length === 0) parts.push(`${a.bytes} bytes${a.contentType ? ` of ${a.contentType}` : ''}`);
  else parts.push('no response to the request');
  if (a.failure) parts.push(a.failure.reason === 'timeout' ? 'then timed out' : `then ${a.failure.reason}`);
  return parts.join(', ');
}

function resultText(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? result.content : [];
  const text = content.map((b) => asRecord(b)?.text).find((t) => typeof t === 'string');
  return typeof text === 'string' ? JSON.stringify(excerpt(text, 48)) : '';
}

const codeOf = (e: ErrorMessage | undefined): number | undefined => (typeof e?.code === 'number' ? e.code : undefined);

/** A report of a missed expectation. */
const miss = (message: string, pointer: string, evidence: unknown, fix: string, severity?: Report['severity']): Report => ({
  message,
  pointer,
  evidence: excerpt(evidence),
  fix,
  ...(severity ? { severity } : {}),
});

export interface ErrorExpectation {
  /** Codes that meet the expectation. */
  codes: readonly number[];
  /** HTTP statuses that meet it (default: any). */
  statuses?: readonly number[];
  /** How a wrong status counts (default error). */
  statusSeverity?: Report['severity'];
  /** How a wrong code counts (default error). */
  codeSeverity?: Report['severity'];
  text: string;
  fix: string;
  /** More to check once the code is right. */
  more?: (a: Answer, e: ErrorMessage) => Report[];
}

/** The answer must be a JSON-RPC error with one of `codes` (on one of `statuses`). */
export function wantError(x: ErrorExpectation): Expectation {
  return {
    text: x.text,
    fix: x.fix,
    check(a) {
      const out: Report[] = [];
      const e = a.error;
      const code = codeOf(e);
      // No error at all says it all: the status is not worth a second finding.
      if (!e)
        return [
          miss(
            `expected a JSON-RPC error ${x.codes.join(' or ')}, got ${gotText(a)}`,
            a.result ? '/response/result' : '/response',
            a.result ?? a.bodyProblem?.excerpt ?? a.status,
            x.fix,
          ),
        ];
      if (code === undefined || !x.codes.includes(code))
        out.push(
          miss(
            `expected error code ${x.codes.join(' or ')}, got ${describeError(e)}`,
            '/response/error/code',
            e.value.error,
            x.fix,
            x.codeSeverity,
          ),
        );
      if (x.statuses && a.status !== undefined && !x.statuses.includes(a.status)) {
        out.push(
          miss(`expected HTTP ${x.statuses.join(' or ')}, got HTTP ${a.status}`, '/status', `HTTP ${a.status}`, x.fix, x.statusSeverity),
        );
      }
      if (code !== undefined && x.codes.includes(code) && x.more) out.push(...x.more(a, e));
      return out;
    },
  };
}

/** The answer must be a result (`check` judges it further). */
export function wantResult(text: string, fix: string, more?: (a: Answer, result: Record<string, unknown>) => Report[]): Expectation {
  return {
    text,
    fix,
    check(a) {
      if (!a.result)
        return [miss(`expected a result, got ${gotText(a)}`, '/response', a.error?.value ?? a.bodyProblem?.excerpt ?? a.status, fix)];
      return more ? more(a, a.result) : [];
    },
  };
}

/** The request must be turned away with an HTTP error status (`preferred` is the one the spec names). */
export function wantRejected(x: {
  text: string;
  fix: string;
  preferred?: number;
  otherSeverity?: Report['severity'];
  servedSeverity?: Report['severity'];
}): Expectation {
  return {
    text: x.text,
    fix: x.fix,
    check(a) {
      const status = a.status ?? 0;
      if (status >= 200 && status < 300)
        return [miss(`the request was served (${gotText(a)}) instead of rejected`, '/status', `HTTP ${status}`, x.fix, x.servedSeverity)];
      if (status >= 500) return [miss(`expected a 4xx rejection, got ${gotText(a)}`, '/status', `HTTP ${status}`, x.fix)];
      if (x.preferred !== undefined && status !== x.preferred && status >= 400) {
        return [miss(`expected HTTP ${x.preferred}, got HTTP ${status}`, '/status', `HTTP ${status}`, x.fix, x.otherSeverity ?? 'warning')];
      }
      if (status < 400) return [miss(`expected a 4xx rejection, got ${gotText(a)}`, '/status', `HTTP ${status}`, x.fix)];
      return [];
    },
  };
}
