// Every rule, in the order `mcp-warden rules` lists them. One file per family.
import { BODY_RULES } from './bodies.ts';
import { CODE_RULES } from './codes.ts';
import { LEAK_RULES } from './leaks.ts';
import { PROTOCOL_RULES } from './protocol.ts';
import { TOOL_RULES } from './tools.ts';
import type { Rule } from './types.ts';

export const RULES: readonly Rule[] = [...TOOL_RULES, ...CODE_RULES, ...BODY_RULES, ...PROTOCOL_RULES, ...LEAK_RULES];
