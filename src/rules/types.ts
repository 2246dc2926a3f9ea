// What a rule is, what it looks at, and what it returns. Rules are pure: a subject in, findings
// out; no I/O, no clock, no state.
import type { IncomingHttpHeaders } from 'node:http';
import type { Decoded } from '../codec/json-body.ts';
import type { Message } from '../codec/jsonrpc.ts';
import type { Session } from '../exchange/sessions.ts';
import type { OpenRequest } from '../exchange/table.ts';
import type { ArgumentError } from './tool-arguments.ts';

import type { Finding, Severity } from '../verdicts.ts';

export type { Finding, Severity };

/**
 * How a session's messages travel: Streamable HTTP, the legacy HTTP+SSE transport of 2024-11-05
 * (a GET stream carries every answer; POSTs are only accepted), or newline-delimited stdio.
 */
export type Wire = 'streamable-http' | 'sse' | 'stdio';

/** A body (or SSE event) from the server that answered nothing: why it did not decode, and a short excerpt. */
export interface BodyProblem {
  problem: 'empty' | 'not-utf8' | 'html' | 'not-json' | 'not-jsonrpc';
  excerpt: string;
  /**
   * A page or text body as a person reads it (markup dropped, redacted, bounded): what the leak
   * rules read of an error page (an Express 500 page's stack trace), where `excerpt` is its head.
   */
  text?: string;
}

/** A leak the response merely echoes from the request: a path into the response message, and the span of the leak's text there. */
export interface Echo {
  at: Array<string | number>;
  start: number;
  end: number;
}

/**
 * What the rules read of a request's content that a capture redacts (tool arguments), as facts
 * holding none of it: computed by the live proxy on the exchange (rules/request-facts.ts), read by
 * the rules in a replay instead of the redacted request.
 */
export interface RequestFacts {
  /** silent-success: the result's statement is about the call's arguments (an argument opens it, reads as a failure, or asks for failures). */
  aboutArguments?: true;
  /** input-validation: how the arguments failed the tool's inputSchema (pointers, argument names and the schema's words; no value). */
  argumentErrors?: ArgumentError[];
  /** The leak rules: the leaks of the response that echo the request's params (references into the response, not the params' text). */
  echoes?: Echo[];
}

/** One request and what answered it (or did not), with the HTTP context of both sides. */
export interface ExchangeSubject {
  kind: 'exchange';
  /** The transport of the session (undefined: Streamable HTTP). */
  wire?: Wire;
  /** The version the exchange is judged by. */
  version: string | undefined;
  request: OpenRequest;
  /** Headers of the HTTP request that carried it ({} for a server-to-client request). */
  requestHeaders: IncomingHttpHeaders;
  response: Message | undefined;
  outcome: string;
  /** HTTP status and content type of the response the client got. */
  status: number | undefined;
  contentType: string | undefined;
  transport: 'json' | 'sse' | 'get-sse' | 'stdio' | 'none';
  /** The proxy's own failure code, when the server gave no answer. */
  proxyError: string | undefined;
  /** A stdio child that exited with the exchange open: how, and its last stderr lines. */
  exit?: ProcessExit;
  /** What the server sent instead of an answer, when it sent something that was not one. */
  bodyProblem: BodyProblem | undefined;
  /** Responses in the same body or stream that answered no open request (wrong or null ids). */
  unmatched: readonly Message[];
  session: Session;
  /** Replay only: what the capture kept of the request's redacted content (the rules read it instead of the request's arguments). */
  facts?: RequestFacts;
}

/** One client POST as a whole: its body and the server's reply, for rules about the HTTP exchange. */
export interface PostSubject {
  kind: 'post';
  /** The transport of the session (undefined: Streamable HTTP); a stdio line is judged as a POST without headers. */
  wire?: Wire;
  version: string | undefined;
  requestHeaders: IncomingHttpHeaders;
  request: Decoded;
  status: number | undefined;
  contentType: string | undefined;
  /** Headers of the server's reply. */
  responseHeaders: IncomingHttpHeaders | undefined;
  /** The server's reply body, when it was JSON (not for SSE). */
  response: Decoded | undefined;
  /** Bytes of the server's reply body. */
  responseBytes: number;
  session: Session;
  /**
   * A stdio line or legacy SSE POST whose answer belongs on the session's stream: how long the
   * engine waited there without one (engine/malformed.ts). Undefined: not waited for, or answered.
   */
  unansweredAfterMs?: number;
}

/** How a stdio child ended: its exit code or signal ("code 3", "signal SIGKILL"), and the last lines of its stderr (redacted, cut). */
export interface ProcessExit {
  how: string;
  stderr: readonly string[];
}

/** One line a stdio child wrote to its stdout, for the rules about stdio's framing. */
export interface LineSubject {
  kind: 'line';
  wire: 'stdio';
  version: string | undefined;
  /** How many lines it took: more than one is a message with embedded newlines. */
  lines: number;
  /** Why it is not an MCP message, when it is not. */
  problem: BodyProblem | undefined;
  session: Session;
}

export type Subject = ExchangeSubject | PostSubject | LineSubject;

export interface RuleInfo {
  /** Stable kebab-case id: users' policies and dashboards name it. */
  id: string;
  /** Policy group: a user can switch a whole family with one key. */
  group: string;
  severity: Severity;
  /** Versions the rule applies to. */
  versions: readonly string[];
  /** Who breaks it. */
  party: 'server' | 'client';
  /** The transports it judges (undefined: all): a rule about HTTP headers or statuses has nothing to read on stdio. */
  transports?: readonly Wire[];
  /** One line for `mcp-warden rules` and the README. */
  summary: string;
  /** The spec passage(s) it comes from, as https URLs joined with ", " (the README links them, SARIF carries them as `spec`); a limit of the proxy's own is named in words. */
  source: string;
}

/** What a rule says about one finding; severity and versions come from the rule. */
export type Report = Omit<Finding, 'rule' | 'severity' | 'versions'> & { severity?: Severity };

export interface ExchangeRule extends RuleInfo {
  subject: 'exchange';
  check(s: ExchangeSubject): Report[];
}

export interface PostRule extends RuleInfo {
  subject: 'post';
  check(s: PostSubject): Report[];
}

export interface LineRule extends RuleInfo {
  subject: 'line';
  check(s: LineSubject): Report[];
}

export type Rule = ExchangeRule | PostRule | LineRule;
