// How findings become changes to the traffic. A rewriter puts one rule's finding right on a copy
// of the message; decide() turns all findings of an exchange plus the policy into one decision.
import type { JsonRpcId } from '../codec/jsonrpc.ts';
import type { ExchangeSubject, Finding } from '../rules/types.ts';

/** A JSON-RPC response as a plain JSON object (what goes on the wire). */
export type ResponseMessage = { jsonrpc: '2.0'; id?: JsonRpcId | null; result?: unknown; error?: { code: number; message: string; data?: unknown } } & Record<string, unknown>;

export interface RewriteContext {
  subject: ExchangeSubject;
  finding: Finding;
  /** Replaces leaked internals. */
  marker: string;
}

/** The result of one rewriter: the new message, and an HTTP status it needs (only honoured where the status can still change). */
export interface Rewritten {
  message: ResponseMessage;
  status?: number;
}

export interface Rewriter {
  /** Rule ids this rewriter puts right. */
  rules: readonly string[];
  /**
   * Puts the finding right. `message` is the response as it stands after earlier rewrites (a copy
   * the rewriter may change), or undefined when the server sent no usable response (HTML, empty
   * body, dropped connection): then the rewriter builds one. Returns undefined when it has nothing
   * to change (e.g. an earlier rewrite already replaced what it would fix).
   */
  apply(message: ResponseMessage | undefined, ctx: RewriteContext): Rewritten | undefined;
}

export type Decision =
  | { kind: 'pass' }
  /** Send `message` instead of what the server sent (and `status`, where it can still change). */
  | { kind: 'mutate'; message: ResponseMessage; status: number | undefined; rules: string[]; before: string; /** Rules an earlier rewrite already put right. */ settled: string[] }
  /** Do not pass the message on: answer the client with this JSON-RPC error. */
  | { kind: 'reject'; message: ResponseMessage; status: number; rules: string[] };
