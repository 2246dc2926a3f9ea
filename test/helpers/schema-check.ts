// Checks a JSON-RPC response against the official schema of its MCP version
// (test/fixtures/schemas/<version>/schema.json, unchanged copies; see the README there).
// 2024-11-05 .. 2025-06-18 are draft-07 with `definitions` (JSONRPCResponse, JSONRPCError);
// 2025-11-25 and 2026-07-28 are 2020-12 with `$defs` (JSONRPCResultResponse, JSONRPCErrorResponse).
// One ajv instance and one set of compiled validators per version, built on first use.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';

export const SCHEMA_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'] as const;

interface Validators {
  result: ValidateFunction;
  error: ValidateFunction;
  callToolResult: ValidateFunction;
  inputRequiredResult: ValidateFunction | undefined;
}

const cache = new Map<string, Validators>();

function validatorsFor(version: string): Validators {
  const cached = cache.get(version);
  if (cached) return cached;
  if (!(SCHEMA_VERSIONS as readonly string[]).includes(version)) throw new Error(`no schema for version ${version}`);
  const schema = JSON.parse(readFileSync(new URL(`../fixtures/schemas/${version}/schema.json`, import.meta.url), 'utf8')) as Record<
    string,
    unknown
  >;
  const modern = '$defs' in schema;
  const options = { strict: false, allErrors: true, validateFormats: false } as const;
  const ajv = modern ? new Ajv2020(options) : new Ajv(options);
  const key = `mcp-${version}`;
  ajv.addSchema(schema, key);
  const defs = modern ? '$defs' : 'definitions';
  const ref = (name: string): ValidateFunction => {
    const validate = ajv.compile({ $ref: `${key}#/${defs}/${name}` });
    return validate;
  };
  const names = Object.keys((schema[defs] ?? {}) as Record<string, unknown>);
  const validators: Validators = {
    result: ref(modern ? 'JSONRPCResultResponse' : 'JSONRPCResponse'),
    error: ref(modern ? 'JSONRPCErrorResponse' : 'JSONRPCError'),
    callToolResult: ref('CallToolResult'),
    inputRequiredResult: names.includes('InputRequiredResult') ? ref('InputRequiredResult') : undefined,
  };
  cache.set(version, validators);
  return validators;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function check(validate: ValidateFunction, value: unknown, what: string, message: unknown): void {
  if (validate(value) === true) return;
  const errors = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}`).join('; ');
  assert.fail(`${what} is invalid: ${errors}\n${JSON.stringify(message)}`);
}

/** The result types 2026-07-28 defines (R64); the schema only says "string". */
const RESULT_TYPES = new Set(['complete', 'input_required']);

/**
 * Asserts `message` is a valid JSON-RPC response of `version` per the official schema: exactly one
 * of result and error (R4), then the version's result or error response definition. With `method`
 * "tools/call", a result is also checked against CallToolResult (or, under 2026-07-28,
 * InputRequiredResult when it says so). A 2026-07-28 result must carry a resultType the version
 * defines.
 */
export function assertValidResponse(message: unknown, version: string, method?: string): void {
  const v = validatorsFor(version);
  assert.ok(isObject(message), `a response is a JSON object: ${JSON.stringify(message)}`);
  const hasResult = 'result' in message;
  const hasError = 'error' in message;
  assert.ok(hasResult !== hasError, `a response has exactly one of result and error: ${JSON.stringify(message)}`);
  if (hasError) {
    check(v.error, message, `${version} error response`, message);
    return;
  }
  check(v.result, message, `${version} result response`, message);
  const result = message.result;
  if (version === '2026-07-28') {
    const type = isObject(result) ? result.resultType : undefined;
    assert.ok(
      typeof type === 'string' && RESULT_TYPES.has(type),
      `a 2026-07-28 result has resultType complete or input_required: ${JSON.stringify(message)}`,
    );
  }
  if (method !== 'tools/call') return;
  if (isObject(result) && result.resultType === 'input_required' && v.inputRequiredResult) {
    check(v.inputRequiredResult, result, `${version} InputRequiredResult`, message);
  } else {
    check(v.callToolResult, result, `${version} CallToolResult`, message);
  }
}
