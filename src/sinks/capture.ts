// An opt-in capture of exchanges as JSON lines, for `mcp-warden replay`: each completed exchange
// with what it takes to judge it again offline. Secrets never reach it: credential headers are
// left out, tool argument strings are replaced, and values under credential names and
// credential-shaped text are masked at any depth (src/redact/: past its bounds, a marker). What the
// rules read of the replaced arguments is kept as facts that hold none of them (rules/request-facts.ts).
import { createHmac, randomBytes } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import type { Logger } from 'pino';
import type { Completed } from '../exchange/correlate.ts';
import { H } from '../mcp/headers.ts';
import { leakPatternsOf } from '../config/runtime.ts';
import type { Policy } from '../config/types.ts';
import { requestFacts } from '../rules/request-facts.ts';
import type { ExchangeSubject, RequestFacts } from '../rules/types.ts';
import { mapDeep, maskVisit, REDACT_BOUNDS } from '../redact/values.ts';
import { hideText, loggedHeaders, maskSecrets, maskShapes } from './redact.ts';

export const CAPTURE_VERSION = 1;

/** One line of a capture file. */
export interface CaptureRecord {
  v: typeof CAPTURE_VERSION;
  time: string;
  session: string | null;
  /**
   * Which credential a request without a session id came with, as a label keyed by a random key
   * the proxy never writes (never the credential or a plain hash of it): the proxy keeps such
   * requests' state (a 2026-07-28 client's tool catalogue) per credential, and so does a replay.
   */
  principal?: string;
  /** The transport when not Streamable HTTP: a legacy SSE session's (`session` is its id) or stdio's (one session per child). */
  wire?: 'sse' | 'stdio';
  protocolVersion: string | null;
  request: {
    from: 'client' | 'server';
    headers: Record<string, string>;
    message: unknown;
    /** What the rules read of the request's redacted content (absent in captures of mcp-warden before it: replayed from the redacted request). */
    facts?: RequestFacts;
  };
  response: {
    outcome: string;
    status: number | null;
    contentType: string | null;
    transport: ExchangeSubject['transport'];
    message: unknown;
    bodyProblem: ExchangeSubject['bodyProblem'] | null;
    unmatched: unknown[];
    proxyError: string | null;
  };
}

/** Request headers a replay needs (the protocol's own); credentials are never among them. */
const KEPT_HEADERS = [H.sessionId, H.protocolVersion, H.method, H.name, 'content-type', 'accept'];

/**
 * A server's message as the capture keeps it: masked, and one level deeper than the rules read, so
 * that a message nested past their bound is still past it in a replay (unreadable-response).
 */
const keptMessage = (value: unknown): unknown => mapDeep(value, maskVisit, { ...REDACT_BOUNDS, depth: REDACT_BOUNDS.depth + 1 });

/** Facts with credential-shaped text masked where a peer chose it (an argument's name in a pointer); echoes point into the response as kept. */
const maskedFacts = (facts: RequestFacts): RequestFacts =>
  facts.argumentErrors ? { ...facts, argumentErrors: maskShapes(facts.argumentErrors) } : facts;

/** The capture record of a judged exchange; `policy`: the one it was judged under (its leak patterns say what the echoes are). */
export function captureRecord(c: Completed, subject: ExchangeSubject, policy: Policy, time: Date, principal?: string): CaptureRecord {
  const { request } = c;
  const params = request.params as Record<string, unknown> | undefined;
  const safeParams =
    params && typeof params === 'object' && 'arguments' in params ? { ...params, arguments: hideText(params.arguments) } : params;
  const kept: Record<string, string> = {};
  for (const [name, v] of Object.entries(request.headers))
    if ((KEPT_HEADERS.includes(name) || name.startsWith(H.paramPrefix)) && typeof v === 'string') kept[name] = v;
  // Mcp-Param-* values are tool arguments: hidden, as the arguments are.
  const headers = loggedHeaders(kept) as Record<string, string>;
  const message = c.response ? keptMessage(c.response.value) : null;
  return {
    v: CAPTURE_VERSION,
    time: time.toISOString(),
    session: request.sessionId ?? null,
    ...(principal === undefined ? {} : { principal }),
    ...(subject.wire === 'sse' || subject.wire === 'stdio' ? { wire: subject.wire } : {}),
    protocolVersion: request.protocolVersion ?? null,
    request: {
      from: request.from,
      headers,
      message: maskSecrets({ jsonrpc: '2.0', id: request.id, method: request.method, params: safeParams }),
      facts: maskedFacts(requestFacts(subject, message, leakPatternsOf(policy))),
    },
    response: {
      outcome: c.outcome,
      status: subject.status ?? null,
      contentType: subject.contentType ?? null,
      transport: subject.transport,
      message,
      bodyProblem: subject.bodyProblem ?? null,
      unmatched: subject.unmatched.map((m) => keptMessage(m.value)),
      proxyError: subject.proxyError ?? null,
    },
  };
}

/** Hands the labelling key to the processes of `--workers`, so that a credential has one label in all of them. */
export const CAPTURE_KEY_ENV = 'MCP_WARDEN_CAPTURE_KEY';
let key: string | undefined;

/** This process's key for labelling credentials (the primary's under `--workers`): random, held in memory, never written. */
export function captureKey(): string {
  key ??= process.env[CAPTURE_KEY_ENV] || randomBytes(32).toString('base64url');
  return key;
}

/**
 * The label of a session the proxy keeps per credential (its key is derived from the credential):
 * keyed by captureKey(), so the capture cannot be searched for a guessed credential.
 */
const principalOf = (sessionKey: string): string => createHmac('sha256', captureKey()).update(sessionKey).digest('base64url').slice(0, 16);

/** Appends capture records to a file; never blocks or throws into the traffic. */
export class CaptureSink {
  private readonly stream: WriteStream;
  private failed = false;

  constructor(
    readonly path: string,
    logger: Logger,
    /** Told of each exchange the file could not take (mcp_warden_capture_errors_total), for as long as it lasts. */
    private readonly lost: () => void = () => {},
  ) {
    this.stream = createWriteStream(path, { flags: 'a' });
    this.stream.on('error', (err) => {
      if (!this.failed) logger.error({ err, path }, 'capture failed; exchanges are no longer captured');
      this.failed = true;
      this.lost();
    });
  }

  /** Captures a judged exchange. */
  exchange(c: Completed, subject: ExchangeSubject, policy: Policy, time: Date): void {
    if (this.failed) {
      this.lost();
      return;
    }
    // A client's request with no session of its own (no Mcp-Session-Id, no SSE or stdio session) is kept per credential.
    const perCredential =
      c.request.from === 'client' && c.request.sessionId === undefined && (subject.wire ?? 'streamable-http') === 'streamable-http';
    const principal = perCredential ? principalOf(subject.session.key) : undefined;
    this.stream.write(`${JSON.stringify(captureRecord(c, subject, policy, time, principal))}\n`);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.stream.end(resolve));
  }
}
