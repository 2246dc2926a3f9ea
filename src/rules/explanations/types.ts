// What an explanation of a rule holds: why the spec asks for it, the smallest exchange that breaks
// it and the same exchange done right, and what to change. What is wrong is the rule's own summary
// (types.ts), so it is said once.

/** A spec sentence, quoted briefly, and where it is from. */
export interface Quote {
  text: string;
  /** The protocol version it is quoted from ("2026-07-28"), or the document ("JSON-RPC 2.0", "mcp-warden"). */
  from: string;
}

export interface Explanation {
  why: Quote;
  /** A minimal exchange that breaks the rule: lines starting `→` the client sent, `←` what came back. */
  bad: string;
  /** The same exchange as the spec asks for it. */
  good: string;
  /** What to change, whatever built the server. */
  fix: string;
}
