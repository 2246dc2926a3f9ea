// Every rule, in the order `mcp-warden rules` lists them. One file per family.
import type { UnknownToolAnswer } from '../config/types.ts';
import { ANSWER_ID_RULES } from './answer-ids.ts';
import { BATCH_ANSWER_RULES } from './batch-answers.ts';
import { BODY_RULES } from './bodies.ts';
import { CODE_RULES } from './codes.ts';
import { LEAK_RULES, leakRules, type LeakPattern } from './leaks.ts';
import { PARSE_ERROR_ANSWER_RULES } from './parse-error-answers.ts';
import { PROTOCOL_RULES } from './protocol.ts';
import { REQUEST_ID_RULES } from './request-ids.ts';
import { REQUEST_REJECTION_RULES } from './request-rejections.ts';
import { silentSuccessRule } from './silent-success.ts';
import { STDIO_RULES } from './stdio.ts';
import { TOOL_CATALOGUE_RULES } from './tool-catalogue.ts';
import { TOOL_RULES } from './tools.ts';
import type { Rule } from './types.ts';
import { UNREADABLE_RULES } from './unreadable.ts';
import { unknownToolRules, unknownToolUnanswered } from './unknown-tool.ts';
import { UNSUPPORTED_VERSION_RULES } from './unsupported-version.ts';

export const RULES: readonly Rule[] = [
  ...TOOL_RULES,
  ...TOOL_CATALOGUE_RULES,
  ...CODE_RULES,
  ...BODY_RULES,
  unknownToolUnanswered,
  ...PROTOCOL_RULES,
  ...ANSWER_ID_RULES,
  ...REQUEST_ID_RULES,
  ...LEAK_RULES,
  ...UNREADABLE_RULES,
  ...UNSUPPORTED_VERSION_RULES,
  ...REQUEST_REJECTION_RULES,
  ...BATCH_ANSWER_RULES,
  ...PARSE_ERROR_ANSWER_RULES,
  ...STDIO_RULES,
];

/** Patterns a policy adds to (or puts in place of) the built-in ones, and the answers it expects where the field disputes the spec. */
export interface RulePatterns {
  leaks: readonly LeakPattern[];
  silentSuccess: readonly RegExp[];
  unknownTool: UnknownToolAnswer;
}

/** The catalogue with the pattern-driven rules (leaks, silent success) judging with `patterns`; same ids, same order. */
export function rulesWith(patterns: RulePatterns): readonly Rule[] {
  const silent = silentSuccessRule(patterns.silentSuccess);
  const replaced = new Map(
    [...leakRules(patterns.leaks, patterns.silentSuccess), ...unknownToolRules(patterns.unknownTool), silent].map((r) => [r.id, r]),
  );
  return RULES.map((r) => replaced.get(r.id) ?? r);
}
