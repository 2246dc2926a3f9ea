// Tools: calls to tools the server does not have, results that hide a failure, result and list
// shapes, and argument errors reported where the model cannot see them. One file
// per concept; this one holds the family's order.
import { INPUT_VALIDATION_RULES } from './input-validation.ts';
import { silentSuccess } from './silent-success.ts';
import { TOOL_SHAPE_RULES } from './tool-shapes.ts';
import type { Rule } from './types.ts';
import { toolFailureAsProtocolError } from './tool-failure.ts';
import { UNKNOWN_TOOL_RULES } from './unknown-tool.ts';

export { failureStatement, SILENT_SUCCESS_PATTERNS } from './silent-success.ts';
export { mentions, validateArguments, type ArgumentError, type ArgumentsVerdict } from './tool-arguments.ts';
export { UNKNOWN_TOOL_TEXT } from './unknown-tool.ts';

export const TOOL_RULES: readonly Rule[] = [
  ...UNKNOWN_TOOL_RULES,
  silentSuccess,
  ...TOOL_SHAPE_RULES,
  ...INPUT_VALIDATION_RULES,
  toolFailureAsProtocolError,
];
