// Every rule, in the order `mcp-warden rules` lists them. One file per family.
import { BODY_RULES } from './bodies.ts';
import type { Rule } from './types.ts';

export const RULES: readonly Rule[] = [...BODY_RULES];
