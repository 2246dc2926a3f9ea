// The vocabulary of verdicts that every layer shares: what a rule found, what the policy makes of
// it, and what a decision sends. A leaf module (it imports only codec types), so that the records
// of exchange/ can hold findings and decisions without exchange/ importing rules/ or rewrite/.
import type { JsonRpcId } from './codec/jsonrpc.ts';

export type Severity = 'error' | 'warning' | 'info';

/** What to do with a finding: ignore it, log it, put it right, or stop the message. */
export type Action = 'off' | 'log' | 'rewrite' | 'block';

export interface Finding {
  rule: string;
  severity: Severity;
  /** What is wrong, in one line. */
  message: string;
  /** JSON Pointer to the offending part, prefixed with where it is: `/response/error/code`, `/request/params/_meta`, `/headers/mcp-method`. */
  pointer: string;
  /** A short, redacted excerpt of the offending value. */
  evidence: string;
  /** What the server (or client) should send instead. */
  fix: string;
  versions: readonly string[];
}

/** A finding with the action the policy in force gives it. */
export interface PolicedFinding extends Finding {
  action: Action;
}

/** A JSON-RPC response as a plain JSON object (what goes on the wire). */
export type ResponseMessage = {
  jsonrpc: '2.0';
  id?: JsonRpcId | null;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
} & Record<string, unknown>;

export type Decision =
  | { kind: 'pass' }
  /** Send `message` instead of what the server sent (and `status`, where it can still change). */
  | {
      kind: 'mutate';
      message: ResponseMessage;
      status: number | undefined;
      rules: string[];
      before: string /** Rules an earlier rewrite already put right. */;
      settled: string[];
    }
  /** Do not pass the message on: answer the client with this JSON-RPC error. */
  | { kind: 'reject'; message: ResponseMessage; status: number; rules: string[] };

/** The decision that changes nothing. */
export const PASS: Decision = { kind: 'pass' };

/** What the client's rules made of a request before it was forwarded: their findings, and the policy's decision. */
export interface RequestVerdict {
  findings: PolicedFinding[];
  decision: Decision;
}

/** The verdict of a request no rule judged (a server's request, an expired one). */
export const NO_VERDICT: RequestVerdict = { findings: [], decision: PASS };
