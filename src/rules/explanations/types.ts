// What an explanation of a rule holds: why the spec asks for it, the smallest exchange that breaks
// it and the same exchange done right, what to change, and where a framework needs another change.
// What is wrong is the rule's own summary (types.ts), so it is said once.
import type { FrameworkId } from '../../frameworks/frameworks.ts';

/** A spec sentence, quoted briefly, and where it is from. */
export interface Quote {
  text: string;
  /** The protocol version it is quoted from ("2026-07-28"), or the document ("JSON-RPC 2.0", "mcp-warden"). */
  from: string;
}

/** Where the SDK itself sends what the rule flags: the user's code cannot change it. */
export interface SdkDoesIt {
  /** The version that answers right, when one does. */
  fixedIn?: string;
  /** The SDK's issue or pull request about it. */
  issue?: string;
  /** What puts it right meanwhile (a policy switch of mcp-warden). */
  meanwhile: string;
}

/** The fix in one framework, where it differs from the general one. */
export interface FrameworkFix {
  fix: string;
  /** Code that makes the change, in the framework's language. */
  snippet?: string;
  sdk?: SdkDoesIt;
  /** Where the behaviour was read: repository or package, version or commit, file. */
  source: string;
}

export interface Explanation {
  why: Quote;
  /** A minimal exchange that breaks the rule: lines starting `→` the client sent, `←` what came back. */
  bad: string;
  /** The same exchange as the spec asks for it. */
  good: string;
  /** What to change, whatever built the server. */
  fix: string;
  /** The fix in a framework where it differs (frameworks/frameworks.ts). */
  frameworks?: Partial<Record<FrameworkId, FrameworkFix>>;
}
