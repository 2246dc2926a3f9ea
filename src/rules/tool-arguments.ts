// Tool arguments against a tool's inputSchema (ajv, in the schema's JSON Schema dialect), and
// whether a text names a parameter: what the input-validation rules read. The spec: server/tools,
// "Error Handling", e.g. https://modelcontextprotocol.io/specification/2025-11-25/server/tools#error-handling,
// and for the default dialect the "JSON Schema Usage" section of https://modelcontextprotocol.io/specification/2025-11-25/basic
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { versionInfo } from '../mcp/versions.ts';
import { asRecord } from '../codec/json-value.ts';
import { excerpt } from '../redact/excerpt.ts';
import { pointer, unescapeSegment } from '../codec/json-pointer.ts';
import { ASSERTED_FORMATS } from './schema-formats.ts';
import { linearRegExp, UnsafePattern } from './schema-regexp.ts';

export interface ArgumentError {
  /** JSON Pointer into the arguments (for a missing or extra property: to that property). */
  path: string;
  message: string;
  /** The top-level parameter at fault, if the error is about one. */
  param: string | undefined;
}

export interface ArgumentsVerdict {
  valid: boolean;
  errors: ArgumentError[];
}

type Dialect = 'draft-07' | '2019-09' | '2020-12';
/**
 * How a schema is run: `formats` asserts ASSERTED_FORMATS (tool arguments: a model's value in the
 * wrong form is a mistake it can fix); `annotations` leaves every format an annotation, as the
 * dialects do by default (a server's structuredContent against its outputSchema).
 */
export type FormatUse = 'formats' | 'annotations';
type Mode = `${Dialect} ${FormatUse}`;

// Patterns run under RE2 (schema-regexp.ts): a server's schema cannot stall the proxy.
const AJV_OPTIONS = { strict: false, allErrors: true, logger: false, code: { regExp: linearRegExp } } as const;
const MAX_ERRORS = 10;
const validators: Partial<Record<Mode, Ajv | Ajv2019 | Ajv2020>> = {};
/**
 * Compiled validators per schema object and mode; `false` when the schema does not compile, the
 * UnsafePattern when a pattern of it cannot run in linear time.
 */
const compiled = new WeakMap<object, Partial<Record<Mode, ValidateFunction | UnsafePattern | false>>>();

function ajvFor(dialect: Dialect, use: FormatUse): Ajv | Ajv2019 | Ajv2020 {
  const mode: Mode = `${dialect} ${use}`;
  let ajv = validators[mode];
  if (!ajv) {
    const options = use === 'formats' ? { ...AJV_OPTIONS, formats: ASSERTED_FORMATS } : { ...AJV_OPTIONS, validateFormats: false };
    ajv = dialect === '2020-12' ? new Ajv2020(options) : dialect === '2019-09' ? new Ajv2019(options) : new Ajv(options);
    validators[mode] = ajv;
  }
  return ajv;
}

/** The dialect a tool schema is written in: its explicit `$schema`, else the version's default. */
function dialectOf(schema: Record<string, unknown>, version: string | undefined): Dialect | undefined {
  const declared = schema.$schema;
  if (declared === undefined) return versionInfo(version)?.schemaDialect;
  if (typeof declared !== 'string') return undefined;
  if (/^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/.test(declared)) return '2020-12';
  if (/^https?:\/\/json-schema\.org\/draft\/2019-09\/schema#?$/.test(declared)) return '2019-09';
  if (/^https?:\/\/json-schema\.org\/draft-07\/schema#?$/.test(declared)) return 'draft-07';
  return undefined;
}

function validatorFor(schema: Record<string, unknown>, dialect: Dialect, use: FormatUse): ValidateFunction | UnsafePattern | undefined {
  let entry = compiled.get(schema);
  if (!entry) {
    entry = {};
    compiled.set(schema, entry);
  }
  const mode: Mode = `${dialect} ${use}`;
  const cached = entry[mode];
  if (cached !== undefined) return cached || undefined;
  // Compile a copy without the root $id and $schema: the instance's own dialect applies, and a
  // hostile $id cannot replace a schema the instance holds. Ajv caches by schema object: drop it.
  const { $id: _id, $schema: _schema, ...copy } = schema;
  const ajv = ajvFor(dialect, use);
  let validate: ValidateFunction | UnsafePattern | false;
  try {
    validate = ajv.compile(copy);
  } catch (err) {
    validate = err instanceof UnsafePattern ? err : false;
  }
  try {
    ajv.removeSchema(copy);
  } catch {
    // nothing to drop
  }
  entry[mode] = validate;
  return validate || undefined;
}

function argumentError(e: ErrorObject): ArgumentError {
  const params = asRecord(e.params) ?? {};
  let path = e.instancePath;
  const property = params.missingProperty ?? params.additionalProperty ?? params.unevaluatedProperty;
  if (typeof property === 'string') path += pointer(property);
  const first = path.split('/')[1];
  const param = first === undefined ? undefined : unescapeSegment(first);
  let message = e.message ?? e.keyword;
  if (e.keyword === 'enum' && Array.isArray(params.allowedValues)) message += `: ${excerpt(params.allowedValues, 80)}`;
  return { path, message, param };
}

/** The schema's compiled validator (or why it has none), in the dialect it declares or the version defaults to. */
function compiledFor(schema: unknown, version: string | undefined, use: FormatUse): ValidateFunction | UnsafePattern | undefined {
  const record = asRecord(schema);
  const dialect = record && dialectOf(record, version);
  return dialect ? validatorFor(record, dialect, use) : undefined;
}

/**
 * Validates tool arguments against a tool's inputSchema, in the dialect the schema declares or the
 * version defaults to (its row of the versions table). Undefined when it cannot tell: no schema
 * object, an unknown dialect or version, a schema that does not compile, or one with a pattern
 * RE2 cannot run (unsafePattern says which). Never throws.
 */
export function validateArguments(
  schema: unknown,
  args: unknown,
  version: string | undefined,
  use: FormatUse = 'annotations',
): ArgumentsVerdict | undefined {
  try {
    const validate = compiledFor(schema, version, use);
    if (!validate || validate instanceof UnsafePattern) return undefined;
    if (validate(args) === true) return { valid: true, errors: [] };
    return { valid: false, errors: (validate.errors ?? []).slice(0, MAX_ERRORS).map(argumentError) };
  } catch {
    return undefined;
  }
}

/** The pattern that keeps a schema from being judged (validateArguments then cannot tell), if one does. */
export function unsafePattern(schema: unknown, version: string | undefined): UnsafePattern | undefined {
  const validate = compiledFor(schema, version, 'annotations');
  return validate instanceof UnsafePattern ? validate : undefined;
}

/** Whether `text` names `name` as a word (also as snake_case, camelCase or spaced words). */
export function mentions(text: string, name: string): boolean {
  if (name === '') return false;
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_-]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
  const variants = new Set([name, words.join('_'), words.join(' '), words.join('-'), words.join('')]);
  const lower = text.toLowerCase();
  for (const v of variants) {
    if (v === '') continue;
    const escaped = v.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    if (new RegExp(`(?<![\\p{L}\\p{N}_])${escaped}(?![\\p{L}\\p{N}_])`, 'u').test(lower)) return true;
  }
  return false;
}
