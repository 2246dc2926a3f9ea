// Tools: calls to tools the server does not have, results that hide a failure, result and list
// shapes, and argument errors reported where the model cannot see them (R58, R60, R62).
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { asRecord, excerpt, pointer } from './evidence.ts';
import type { ExchangeRule, ExchangeSubject, Report, Rule } from './types.ts';
import { ALL, LEGACY, from } from './versions.ts';

const INVALID_PARAMS = -32602;
/** How much of a result's text the text heuristics read. */
const TEXT_WINDOW = 1024;
/** Findings one rule reports about one list at most. */
const MAX_REPORTS = 5;

/**
 * Codes that say something other than "this tool call is wrong": the request did not parse, the
 * HTTP headers, version or client capabilities were rejected, or URL elicitation is needed first.
 */
const UNRELATED_CODES: ReadonlySet<number> = new Set([-32700, -32600, -32020, -32021, -32022, -32042]);

/** Text that clearly says the named tool does not exist. */
export const UNKNOWN_TOOL_TEXT =
  /\bunknown tool\b|\bno such tool\b|\btool not found\b|\btool\s+["'`]?[\w./:-]{1,64}["'`]?\s+(?:was\s+|is\s+)?not\s+found\b|\btool\s+["'`]?[\w./:-]{1,64}["'`]?\s+does\s*(?:not|n't)\s+exist\b/i;

/**
 * Text that reads as a failure, judged on the first ~1 KB of a result's text. Patterns are anchored
 * at the start of the text or of a line wherever the words are common in ordinary output.
 */
export const SILENT_SUCCESS_PATTERNS: readonly RegExp[] = [
  // "Error: …", "Exception - …", "Fatal! …" at the start of a line
  /^[ \t]*(?:error|exception|fatal)\b[ \t]*(?:[:!]|-(?=\s))/im,
  // A named error at the start of a line: "TypeError: x is undefined", "java.io.IOException: …"
  /^[ \t]*(?:[\w$]+\.)*[A-Z]\w*(?:Error|Exception):/m,
  /\bTraceback \(most recent call last\)/,
  // "Failed to fetch …", "Failure: …"
  /^[ \t]*(?:failed|failure)\b/im,
  // "Request failed with status code 500", "Upload failed.", "Connection failed: …" (not "2 tests failed, 3 passed")
  /^[ \t]*(?!(?:no|none|nothing|zero|never|not)\b)(?:[A-Za-z][\w.'"`-]*[ \t]+){1,3}failed(?:[ \t]*[:.!]|[ \t]+(?:to|with|because|due)\b|[ \t]*$)/im,
  // Node.js system errors as Node reports them ("connect ECONNREFUSED …", "open '/x': ENOENT"), not code that tests for them
  /(?:^[ \t]*|\b(?:connect|open|read|write|spawn|getaddrinfo|stat|lstat|mkdir|scandir|unlink|rename|access)[ \t]+|:[ \t]*)E(?:NOENT|CONNREFUSED|ACCES|TIMEDOUT|CONNRESET|NOTFOUND|PERM|ADDRINUSE)\b/m,
  // "File not found", "User 'bob' not found: …"
  /^[ \t]*(?:[A-Za-z'"`][\w.'"`/-]*[ \t]+){0,3}not found\b/im,
  // "Invalid input: …", "Invalid API key"
  /^[ \t]*invalid\b/im,
  /^[ \t]*(?:permission denied|access denied|unauthori[sz]ed|forbidden)\b/im,
  // "Unable to connect …", "Could not resolve host …", "Cannot read properties of undefined" (start of the text only)
  /^\s*(?:unable to|could not|couldn't|cannot|can't)\s+(?!find any(?:thing)?\b)\w/i,
  // An HTTP error status line
  /^[ \t]*(?:HTTP\/\d(?:\.\d)?[ \t]+)?[45]\d\d[ \t]+(?:Bad Request|Unauthorized|Forbidden|Not Found|Method Not Allowed|Request Timeout|Conflict|Too Many Requests|Internal Server Error|Bad Gateway|Service Unavailable|Gateway Timeout)\b/im,
];

// ---------------------------------------------------------------------------------------------
// Reading a tools/call exchange

const isCall = (s: ExchangeSubject): boolean => s.request.from === 'client' && s.request.method === 'tools/call';

const knownVersion = (v: string | undefined): string | undefined => (v !== undefined && ALL.includes(v) ? v : undefined);

/** The text blocks of a result, joined by newlines (as `resultText` does), with where each starts. */
function textOf(result: unknown, max: number): { text: string; starts: Array<{ index: number; at: number }> } {
  const content = asRecord(result)?.content;
  const starts: Array<{ index: number; at: number }> = [];
  let text = '';
  if (!Array.isArray(content)) return { text, starts };
  for (let i = 0; i < content.length && text.length < max; i++) {
    const block = asRecord(content[i]);
    if (block?.type !== 'text' || typeof block.text !== 'string') continue;
    if (text) text += '\n';
    starts.push({ index: i, at: text.length });
    text += block.text;
  }
  return { text: text.slice(0, max), starts };
}

/** The index of the content block a position of `textOf(...).text` falls in. */
function blockAt(starts: ReadonlyArray<{ index: number; at: number }>, position: number): number | undefined {
  let found: number | undefined;
  for (const s of starts) if (s.at <= position) found = s.index;
  return found;
}

/** Whether a result's resultType says it is not the final answer (modern era; legacy has no resultType). */
const deferredType = (s: ExchangeSubject, result: Record<string, unknown>): boolean =>
  !LEGACY.includes(s.version ?? '') && typeof result.resultType === 'string' && result.resultType !== 'complete';

/**
 * Whether the result is not (yet) a CallToolResult: a 2026-07-28 InputRequiredResult (or an
 * extension's result type), or the CreateTaskResult of a task-augmented call.
 */
function notFinal(s: ExchangeSubject, result: Record<string, unknown>): boolean {
  if (deferredType(s, result)) return true;
  if (asRecord(asRecord(s.request.params)?.task)) return true;
  return asRecord(result.task) !== undefined && !('content' in result);
}

/** The tool the call named, when the session's complete catalogue does not hold it. */
function missingFromCatalogue(s: ExchangeSubject): string | undefined {
  const name = s.request.tool;
  if (name === undefined || !s.session.toolsComplete || s.session.tools.has(name)) return undefined;
  return name;
}

/**
 * How the proxy knows the named tool does not exist: the complete catalogue lacks it, or (without
 * a complete catalogue) the server's own words say so.
 */
function unknownTool(s: ExchangeSubject, words: unknown): 'catalogue' | 'text' | undefined {
  const name = s.request.tool;
  if (name === undefined) return undefined;
  if (s.session.toolsComplete) return s.session.tools.has(name) ? undefined : 'catalogue';
  if (s.session.tools.has(name)) return undefined;
  return typeof words === 'string' && UNKNOWN_TOOL_TEXT.test(words) ? 'text' : undefined;
}

const unknownToolFix = (name: string): string =>
  `answer with a JSON-RPC error {"code": -32602, "message": ${JSON.stringify(`Unknown tool: ${name}`)}}`;

const why = (how: 'catalogue' | 'text'): string => (how === 'catalogue' ? 'which is not in the server\'s tools/list' : 'which the server itself calls unknown');

/** The arguments of a call, when they have the shape CallToolRequest allows (an object, or none). */
function callArguments(s: ExchangeSubject): { args: Record<string, unknown> } | undefined {
  const params = asRecord(s.request.params);
  if (!params) return undefined;
  if (params.arguments === undefined) return { args: {} };
  const args = asRecord(params.arguments);
  return args ? { args } : undefined;
}

/** The failed validation of a call to a catalogued tool, if its arguments fail the tool's inputSchema. */
function failedValidation(s: ExchangeSubject): { tool: string; errors: ArgumentError[] } | undefined {
  const tool = s.request.tool;
  if (tool === undefined) return undefined;
  const known = s.session.tools.get(tool);
  const call = callArguments(s);
  if (!known || !call) return undefined;
  const verdict = validateArguments(known.inputSchema, call.args, s.version);
  if (!verdict || verdict.valid || verdict.errors.length === 0) return undefined;
  return { tool, errors: verdict.errors };
}

const describeErrors = (errors: readonly ArgumentError[], max = 3): string =>
  errors
    .slice(0, max)
    .map((e) => `${e.path || '/'} ${e.message}`)
    .join('; ') + (errors.length > max ? `; +${errors.length - max} more` : '');

const integerCode = (code: unknown): number | undefined => (typeof code === 'number' && Number.isInteger(code) ? code : undefined);

// ---------------------------------------------------------------------------------------------
// Argument validation (ajv)

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

const AJV_OPTIONS = { strict: false, allErrors: true, validateFormats: false, logger: false } as const;
const MAX_ERRORS = 10;
const validators: Partial<Record<Dialect, Ajv | Ajv2019 | Ajv2020>> = {};
/** Compiled validators per schema object and dialect; `false` when the schema does not compile. */
const compiled = new WeakMap<object, Partial<Record<Dialect, ValidateFunction | false>>>();

function ajvFor(dialect: Dialect): Ajv | Ajv2019 | Ajv2020 {
  let ajv = validators[dialect];
  if (!ajv) {
    ajv = dialect === '2020-12' ? new Ajv2020(AJV_OPTIONS) : dialect === '2019-09' ? new Ajv2019(AJV_OPTIONS) : new Ajv(AJV_OPTIONS);
    validators[dialect] = ajv;
  }
  return ajv;
}

/** The dialect a tool schema is written in: its explicit `$schema`, else the version's default. */
function dialectOf(schema: Record<string, unknown>, version: string | undefined): Dialect | undefined {
  const declared = schema.$schema;
  if (declared === undefined) {
    const v = knownVersion(version);
    if (v === undefined) return undefined;
    return from('2025-11-25').includes(v) ? '2020-12' : 'draft-07';
  }
  if (typeof declared !== 'string') return undefined;
  if (/^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/.test(declared)) return '2020-12';
  if (/^https?:\/\/json-schema\.org\/draft\/2019-09\/schema#?$/.test(declared)) return '2019-09';
  if (/^https?:\/\/json-schema\.org\/draft-07\/schema#?$/.test(declared)) return 'draft-07';
  return undefined;
}

function validatorFor(schema: Record<string, unknown>, dialect: Dialect): ValidateFunction | undefined {
  let entry = compiled.get(schema);
  if (!entry) {
    entry = {};
    compiled.set(schema, entry);
  }
  const cached = entry[dialect];
  if (cached !== undefined) return cached || undefined;
  // Compile a copy without the root $id and $schema: the instance's own dialect applies, and a
  // hostile $id cannot replace a schema the instance holds. Ajv caches by schema object: drop it.
  const { $id: _id, $schema: _schema, ...copy } = schema;
  const ajv = ajvFor(dialect);
  let validate: ValidateFunction | false;
  try {
    validate = ajv.compile(copy);
  } catch {
    validate = false;
  }
  try {
    ajv.removeSchema(copy);
  } catch {
    // nothing to drop
  }
  entry[dialect] = validate;
  return validate || undefined;
}

function argumentError(e: ErrorObject): ArgumentError {
  const params = asRecord(e.params) ?? {};
  let path = e.instancePath;
  const property = params.missingProperty ?? params.additionalProperty ?? params.unevaluatedProperty;
  if (typeof property === 'string') path += pointer(property);
  const first = path.split('/')[1];
  const param = first === undefined ? undefined : first.replace(/~1/g, '/').replace(/~0/g, '~');
  let message = e.message ?? e.keyword;
  if (e.keyword === 'enum' && Array.isArray(params.allowedValues)) message += `: ${excerpt(params.allowedValues, 80)}`;
  return { path, message, param };
}

/**
 * Validates tool arguments against a tool's inputSchema, in the dialect the schema declares or the
 * version defaults to (2020-12 from 2025-11-25, draft-07 before). Undefined when it cannot tell:
 * no schema object, an unknown dialect, a schema that does not compile. Never throws.
 */
export function validateArguments(schema: unknown, args: unknown, version: string | undefined): ArgumentsVerdict | undefined {
  const record = asRecord(schema);
  if (!record) return undefined;
  try {
    const dialect = dialectOf(record, version);
    if (!dialect) return undefined;
    const validate = validatorFor(record, dialect);
    if (!validate) return undefined;
    if (validate(args) === true) return { valid: true, errors: [] };
    return { valid: false, errors: (validate.errors ?? []).slice(0, MAX_ERRORS).map(argumentError) };
  } catch {
    return undefined;
  }
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

/** The first pattern the text matches, with the line it matched on; undefined when none does. */
export function failureMatch(text: string, patterns: readonly RegExp[] = SILENT_SUCCESS_PATTERNS): { pattern: RegExp; index: number; line: string } | undefined {
  for (const pattern of patterns) {
    const index = text.search(pattern); // `search` ignores `g` and lastIndex: no state carried over
    if (index < 0) continue;
    const lineStart = text.lastIndexOf('\n', index) + 1;
    const lineEnd = text.indexOf('\n', index);
    const line = text.slice(lineStart, lineEnd < 0 ? undefined : lineEnd);
    return { pattern, index: Math.max(index, lineStart), line: line.trim() || text.slice(index, index + 160) };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Rules

const toolRule = (r: Omit<ExchangeRule, 'subject' | 'party'>): ExchangeRule => ({ ...r, subject: 'exchange', party: 'server' });

/** CallToolResult content block types, and their required fields, per version. */
const BLOCK_FIELDS: Readonly<Record<string, ReadonlyArray<[field: string, type: 'string' | 'object']>>> = {
  text: [['text', 'string']],
  image: [['data', 'string'], ['mimeType', 'string']],
  audio: [['data', 'string'], ['mimeType', 'string']],
  resource: [['resource', 'object']],
  resource_link: [['uri', 'string'], ['name', 'string']],
};

function contentTypes(version: string | undefined): readonly string[] {
  const v = knownVersion(version);
  const types = ['text', 'image', 'resource'];
  if (v === undefined || from('2025-03-26').includes(v)) types.push('audio');
  if (v === undefined || from('2025-06-18').includes(v)) types.push('resource_link');
  return types;
}

/** What is wrong with one content block, if anything. */
function blockProblem(block: unknown, types: readonly string[], version: string | undefined): string | undefined {
  const b = asRecord(block);
  if (!b) return 'is not an object';
  if (typeof b.type !== 'string') return 'has no string "type"';
  if (!types.includes(b.type)) return `has type ${JSON.stringify(b.type)}, which ${version ?? 'no version'} does not define`;
  for (const [field, kind] of BLOCK_FIELDS[b.type] ?? []) {
    const ok = kind === 'object' ? asRecord(b[field]) !== undefined : typeof b[field] === kind;
    if (!ok) return `(type ${b.type}) lacks ${kind === 'object' ? 'an object' : 'a string'} "${field}"`;
  }
  return undefined;
}

export const TOOL_RULES: readonly Rule[] = [
  toolRule({
    id: 'unknown-tool-as-iserror',
    group: 'unknown-tool',
    severity: 'error',
    versions: ALL,
    summary: 'A tools/call for a tool the server does not have was answered with an isError result instead of JSON-RPC error -32602',
    source: 'R62',
    check(s): Report[] {
      if (!isCall(s) || s.response?.kind !== 'result') return [];
      const result = asRecord(s.response.result);
      const name = s.request.tool;
      if (result?.isError !== true || name === undefined) return [];
      const { text } = textOf(result, TEXT_WINDOW);
      const how = unknownTool(s, text);
      if (!how) return [];
      return [
        {
          message: `tools/call named ${JSON.stringify(name)}, ${why(how)}, and got an isError result instead of a JSON-RPC error`,
          pointer: '/response/result/isError',
          evidence: excerpt(text || result),
          fix: unknownToolFix(name),
        },
      ];
    },
  }),
  toolRule({
    id: 'unknown-tool-as-result',
    group: 'unknown-tool',
    severity: 'error',
    versions: ALL,
    summary: 'A tools/call for a tool missing from tools/list was answered with a plain result instead of JSON-RPC error -32602',
    source: 'R62',
    check(s): Report[] {
      if (!isCall(s) || s.response?.kind !== 'result') return [];
      const result = asRecord(s.response.result);
      const name = missingFromCatalogue(s);
      if (name === undefined || result?.isError === true || (result && notFinal(s, result))) return [];
      return [
        {
          message: `tools/call named ${JSON.stringify(name)}, which is not in the server's tools/list, and got a result as if the tool had run`,
          pointer: '/response/result',
          evidence: excerpt(textOf(result, TEXT_WINDOW).text || s.response.result),
          fix: unknownToolFix(name),
        },
      ];
    },
  }),
  toolRule({
    id: 'unknown-tool-wrong-code',
    group: 'unknown-tool',
    severity: 'error',
    versions: ALL,
    summary: 'A tools/call for a tool the server does not have got a JSON-RPC error whose code is not -32602',
    source: 'R62',
    check(s): Report[] {
      if (!isCall(s) || s.response?.kind !== 'error') return [];
      const code = integerCode(s.response.code);
      const name = s.request.tool;
      if (code === undefined || code === INVALID_PARAMS || UNRELATED_CODES.has(code) || name === undefined) return [];
      const how = unknownTool(s, s.response.message);
      if (!how) return [];
      return [
        {
          message: `tools/call named ${JSON.stringify(name)}, ${why(how)}, and got JSON-RPC error ${code} instead of -32602 (invalid params)`,
          pointer: '/response/error/code',
          evidence: excerpt({ code, message: s.response.message }),
          fix: unknownToolFix(name),
        },
      ];
    },
  }),
  toolRule({
    id: 'silent-success',
    group: 'silent-success',
    severity: 'warning',
    versions: ALL,
    summary: 'A tools/call result reads as a failure but does not set isError: true',
    source: 'R62',
    check(s): Report[] {
      if (!isCall(s) || s.response?.kind !== 'result') return [];
      const result = asRecord(s.response.result);
      if (!result || ('isError' in result && result.isError !== false) || notFinal(s, result)) return [];
      if (missingFromCatalogue(s) !== undefined) return []; // unknown-tool-as-result says it
      const { text, starts } = textOf(result, TEXT_WINDOW);
      const match = failureMatch(text);
      if (!match) return [];
      const block = blockAt(starts, match.index);
      return [
        {
          message: `tools/call ${JSON.stringify(s.request.tool ?? '?')} result reads as a failure (${excerpt(match.line, 80)}) but isError is not set`,
          pointer: block === undefined ? '/response/result/content' : pointer('response', 'result', 'content', block, 'text'),
          evidence: excerpt(match.line),
          fix: 'set "isError": true on a result that reports a failure, so the client and the model treat it as one',
        },
      ];
    },
  }),
  toolRule({
    id: 'iserror-not-boolean',
    group: 'tools',
    severity: 'error',
    versions: ALL,
    summary: 'A tools/call result carries isError that is not a JSON boolean',
    source: 'R60',
    check(s): Report[] {
      if (!isCall(s) || s.response?.kind !== 'result') return [];
      const result = asRecord(s.response.result);
      if (!result || !('isError' in result) || typeof result.isError === 'boolean') return [];
      const value = result.isError;
      return [
        {
          message: `tools/call result has isError ${excerpt(value, 40)} (${value === null ? 'null' : typeof value}), which is not a boolean`,
          pointer: '/response/result/isError',
          evidence: excerpt(value),
          fix: 'send "isError": true for a failed call, and false or nothing for a successful one (a JSON boolean, not a string or number)',
        },
      ];
    },
  }),
  toolRule({
    id: 'tool-result-shape',
    group: 'tools',
    severity: 'error',
    versions: ALL,
    summary: 'A tools/call result lacks a content array, or has content blocks the version does not define',
    source: 'R60',
    check(s): Report[] {
      if (!isCall(s) || s.response?.kind !== 'result') return [];
      const result = asRecord(s.response.result);
      if (!result) {
        return [
          {
            message: 'tools/call result is not an object (a CallToolResult with a content array)',
            pointer: '/response/result',
            evidence: excerpt(s.response.result),
            fix: 'answer with a result object: {"content": [{"type": "text", "text": "…"}]}',
          },
        ];
      }
      if (notFinal(s, result)) return [];
      if (!Array.isArray(result.content)) {
        return [
          {
            message: `tools/call result has ${'content' in result ? 'a content that is not an array' : 'no content array'}`,
            pointer: '/response/result/content',
            evidence: excerpt('content' in result ? result.content : result),
            fix: 'always send "content": an array of content blocks, e.g. [{"type": "text", "text": "…"}] (an empty array when there is nothing to say)',
          },
        ];
      }
      const types = contentTypes(s.version);
      const reports: Report[] = [];
      result.content.forEach((block, i) => {
        const problem = reports.length < MAX_REPORTS ? blockProblem(block, types, knownVersion(s.version)) : undefined;
        if (!problem) return;
        reports.push({
          message: `tools/call result content[${i}] ${problem}`,
          pointer: pointer('response', 'result', 'content', i),
          evidence: excerpt(block),
          fix: `send content blocks of the types ${knownVersion(s.version) ?? 'the version'} defines (${types.join(', ')}) with their required fields; put anything else in a text block`,
        });
      });
      return reports;
    },
  }),
  toolRule({
    id: 'tools-list-shape',
    group: 'tools',
    severity: 'error',
    versions: ALL,
    summary: 'A tools/list result has tools without a name or inputSchema, or whose inputSchema.type is not "object"',
    source: 'R58',
    check(s): Report[] {
      if (s.request.from !== 'client' || s.request.method !== 'tools/list' || s.response?.kind !== 'result') return [];
      const result = asRecord(s.response.result);
      if (result && deferredType(s, result)) return [];
      if (!result || !Array.isArray(result.tools)) {
        return [
          {
            message: 'tools/list result has no tools array',
            pointer: result ? '/response/result/tools' : '/response/result',
            evidence: excerpt(result?.tools ?? s.response.result),
            fix: 'answer tools/list with {"tools": [{"name": "…", "inputSchema": {"type": "object"}}]}',
          },
        ];
      }
      const reports: Report[] = [];
      result.tools.forEach((entry, i) => {
        if (reports.length >= MAX_REPORTS) return;
        const tool = asRecord(entry);
        const label = typeof tool?.name === 'string' ? JSON.stringify(tool.name) : `tools[${i}]`;
        const at = (...rest: Array<string | number>) => pointer('response', 'result', 'tools', i, ...rest);
        let problem: { message: string; pointer: string; evidence: unknown } | undefined;
        if (!tool) problem = { message: `tools/list tools[${i}] is not an object`, pointer: at(), evidence: entry };
        else if (typeof tool.name !== 'string') problem = { message: `tools/list tools[${i}] has no string name`, pointer: at('name'), evidence: tool.name ?? tool };
        else if (!asRecord(tool.inputSchema)) problem = { message: `tools/list tool ${label} has ${tool.inputSchema === undefined ? 'no' : 'a non-object'} inputSchema`, pointer: at('inputSchema'), evidence: tool.inputSchema ?? tool };
        else if (asRecord(tool.inputSchema)?.type !== 'object') {
          const type = asRecord(tool.inputSchema)?.type;
          problem = { message: `tools/list tool ${label} has inputSchema.type ${type === undefined ? 'missing' : excerpt(type, 40)}, not "object"`, pointer: at('inputSchema', 'type'), evidence: tool.inputSchema };
        }
        if (problem) {
          reports.push({
            ...problem,
            evidence: excerpt(problem.evidence),
            fix: 'give every tool a string "name" and an "inputSchema" whose "type" is "object" ({"type": "object", "properties": {}} for a tool without arguments)',
          });
        }
      });
      return reports;
    },
  }),
  toolRule({
    id: 'input-validation-as-protocol-error',
    group: 'input-validation',
    severity: 'warning',
    versions: from('2025-11-25'),
    summary: 'Arguments that fail a tool\'s inputSchema got a JSON-RPC error instead of an isError result the model can correct',
    source: 'R62',
    check(s): Report[] {
      if (!isCall(s) || s.response?.kind !== 'error') return [];
      const code = integerCode(s.response.code);
      if (code === undefined || UNRELATED_CODES.has(code) || code === -32601) return [];
      const failed = failedValidation(s);
      if (!failed) return [];
      return [
        {
          message:
            `tools/call ${JSON.stringify(failed.tool)} arguments fail its inputSchema (${describeErrors(failed.errors)}) and got JSON-RPC error ${code}: ` +
            'from 2025-11-25 input validation errors are tool execution errors (isError) the model can see and correct ' +
            '(the 2026-07-28 schema.ts InvalidParamsError still lists invalid tool arguments under -32602)',
          pointer: '/response/error',
          evidence: excerpt({ code, message: s.response.message }),
          fix: `answer with a result {"content": [{"type": "text", "text": ${JSON.stringify(describeErrors(failed.errors, 1))}}], "isError": true} naming the parameter and what is valid`,
        },
      ];
    },
  }),
  toolRule({
    id: 'vague-iserror',
    group: 'input-validation',
    severity: 'warning',
    versions: ALL,
    summary: 'Arguments failed the tool\'s inputSchema, and the isError result names none of the failing parameters',
    source: 'R62',
    check(s): Report[] {
      if (!isCall(s) || s.response?.kind !== 'result') return [];
      const result = asRecord(s.response.result);
      if (result?.isError !== true) return [];
      const failed = failedValidation(s);
      if (!failed) return [];
      const names = new Set<string>();
      for (const e of failed.errors) {
        if (e.param !== undefined) names.add(e.param);
        const leaf = e.path.split('/').pop()?.replace(/~1/g, '/').replace(/~0/g, '~');
        if (leaf && !/^\d+$/.test(leaf)) names.add(leaf);
      }
      if (names.size === 0) return [];
      const { text } = textOf(result, 8 * TEXT_WINDOW);
      for (const name of names) if (mentions(text, name)) return [];
      return [
        {
          message: `isError result for ${JSON.stringify(failed.tool)} does not name what is wrong with its arguments (${describeErrors(failed.errors)})`,
          pointer: '/response/result/content',
          evidence: excerpt(text || result.content),
          fix: `name the parameter and say what is valid, e.g. ${JSON.stringify(describeErrors(failed.errors, 1))}`,
        },
      ];
    },
  }),
];
