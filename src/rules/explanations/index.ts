// Every rule's explanation, by rule id: one entry per rule in its family's file. A test fails for a
// rule of the catalogue without one, and for an entry naming no rule.
import { CODE_EXPLANATIONS } from './codes.ts';
import { FRAMING_EXPLANATIONS } from './framing.ts';
import { LEAK_EXPLANATIONS } from './leaks.ts';
import { PROTOCOL_EXPLANATIONS } from './protocol.ts';
import { TOOL_EXPLANATIONS } from './tools.ts';
import type { Explanation } from './types.ts';

export type { Explanation, Quote } from './types.ts';

export const EXPLANATIONS: ReadonlyMap<string, Explanation> = new Map(
  Object.entries({
    ...TOOL_EXPLANATIONS,
    ...CODE_EXPLANATIONS,
    ...FRAMING_EXPLANATIONS,
    ...PROTOCOL_EXPLANATIONS,
    ...LEAK_EXPLANATIONS,
  }),
);
