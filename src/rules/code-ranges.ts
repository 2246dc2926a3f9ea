// The code table: what each code in JSON-RPC's reserved range means, the versions that define it
// (the versions table's codes), and which range a code falls in ("Error Codes" in
// https://modelcontextprotocol.io/specification/2026-07-28/basic).
import { ALL, where } from './versions.ts';

export interface CodeDefinition {
  code: number;
  name: string;
  /** Versions whose spec defines the code. */
  versions: readonly string[];
}

/** The versions whose spec adds `code` to JSON-RPC's standard ones. */
function definedBy(code: number): readonly string[] {
  return where((v) => v.codes.includes(code));
}

/** Every code in -32768..-32000 some version defines, with the versions that define it. */
export const DEFINED_CODES: readonly CodeDefinition[] = [
  { code: -32700, name: 'Parse error', versions: ALL },
  { code: -32600, name: 'Invalid Request', versions: ALL },
  { code: -32601, name: 'Method not found', versions: ALL },
  { code: -32602, name: 'Invalid params', versions: ALL },
  { code: -32603, name: 'Internal error', versions: ALL },
  { code: -32002, name: 'Resource not found', versions: definedBy(-32002) },
  { code: -32042, name: 'URL elicitation required', versions: definedBy(-32042) },
  { code: -32020, name: 'Header mismatch', versions: definedBy(-32020) },
  { code: -32021, name: 'Missing required client capability', versions: definedBy(-32021) },
  { code: -32022, name: 'Unsupported protocol version', versions: definedBy(-32022) },
];

const STANDARD = new Set([-32700, -32600, -32601, -32602, -32603]);
const BY_CODE = new Map(DEFINED_CODES.map((d) => [d.code, d]));

/**
 * Where a code sits: one of JSON-RPC's five standard codes; the rest of -32768..-32100 (reserved
 * by JSON-RPC 2.0, undefined); -32099..-32020 (owned by the MCP spec); -32019..-32000 (the
 * legacy, implementation-defined server-error range); or an application code outside all that.
 */
export type CodeRange = 'standard' | 'reserved' | 'spec-owned' | 'legacy' | 'application';

export function codeRange(code: number): CodeRange {
  if (STANDARD.has(code)) return 'standard';
  if (code >= -32768 && code <= -32100) return 'reserved';
  if (code >= -32099 && code <= -32020) return 'spec-owned';
  if (code >= -32019 && code <= -32000) return 'legacy';
  return 'application';
}

/** The definition of a code in any version, if one has it. */
export const definitionOf = (code: number): CodeDefinition | undefined => BY_CODE.get(code);

/** Whether `version`'s spec defines `code`. */
export const isDefinedFor = (code: number, version: string): boolean => BY_CODE.get(code)?.versions.includes(version) ?? false;

/** The versions a code is defined in, for messages: "2025-11-25", "2024-11-05..2025-11-25", "no version". */
export function definedIn(code: number): string {
  const versions = BY_CODE.get(code)?.versions ?? [];
  if (versions.length === 0) return 'no version';
  return versions.length === 1 ? versions[0]! : `${versions[0]}..${versions.at(-1)}`;
}
