// Error codes: what each code in JSON-RPC's reserved range means in each version, whether the
// server used it where the spec says, and whether it came with the HTTP status and `data` the
// spec pairs it with. One file per concept; this one
// holds the family's order.
import { legacyRangeCode, reservedCode, resourceNotFoundCode, retiredCode } from './code-choice.ts';
import { errorDataRequired } from './error-data.ts';
import { errorIdNull, errorShape } from './error-envelope.ts';
import { invalidParamsCode } from './invalid-params.ts';
import { errorStatusPairing, methodNotFoundOn404, unknownMethodStatus } from './status-pairing.ts';
import type { Rule } from './types.ts';
import { serverDiscoverMissing, unknownMethodGenericError, unknownMethodWrongCode } from './unknown-method.ts';

export { codeRange, DEFINED_CODES, definedIn, definitionOf, isDefinedFor, type CodeDefinition, type CodeRange } from './code-ranges.ts';

export const CODE_RULES: readonly Rule[] = [
  reservedCode,
  legacyRangeCode,
  retiredCode,
  resourceNotFoundCode,
  invalidParamsCode,
  errorDataRequired,
  unknownMethodWrongCode,
  unknownMethodGenericError,
  unknownMethodStatus,
  errorStatusPairing,
  methodNotFoundOn404,
  serverDiscoverMissing,
  errorShape,
  errorIdNull,
];
