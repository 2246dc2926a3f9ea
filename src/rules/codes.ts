// Error codes: what each code in JSON-RPC's reserved range means in each version, whether the
// server used it where the spec says, and whether it came with the HTTP status and `data` the
// spec pairs it with (R5, R6, R18, R20, R23, R72, R82, R83).
import type { Message } from '../codec/jsonrpc.ts';
import { capabilityFor, CLIENT_METHODS, isUnknownMethod } from '../mcp/methods.ts';
import { META, versionInfo } from '../mcp/versions.ts';
import { asRecord, excerpt, pointer } from './evidence.ts';
import type { ExchangeRule, ExchangeSubject, Report, Rule } from './types.ts';
import { ALL, from, MODERN, until } from './versions.ts';

// ---------------------------------------------------------------------------------------------
// The code table

export interface CodeDefinition {
  code: number;
  name: string;
  /** Versions whose spec defines the code. */
  versions: readonly string[];
}

/** Every code in -32768..-32000 some version defines, with the versions that define it (R82). */
export const DEFINED_CODES: readonly CodeDefinition[] = [
  { code: -32700, name: 'Parse error', versions: ALL },
  { code: -32600, name: 'Invalid Request', versions: ALL },
  { code: -32601, name: 'Method not found', versions: ALL },
  { code: -32602, name: 'Invalid params', versions: ALL },
  { code: -32603, name: 'Internal error', versions: ALL },
  { code: -32002, name: 'Resource not found', versions: until('2025-11-25') },
  { code: -32042, name: 'URL elicitation required', versions: ['2025-11-25'] },
  { code: -32020, name: 'Header mismatch', versions: from('2026-07-28') },
  { code: -32021, name: 'Missing required client capability', versions: from('2026-07-28') },
  { code: -32022, name: 'Unsupported protocol version', versions: from('2026-07-28') },
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

// ---------------------------------------------------------------------------------------------
// Reading the subject

type ErrorMessage = Extract<Message, { kind: 'error' }>;

const isModern = (version: string | undefined): boolean => version !== undefined && versionInfo(version)?.era === 'modern';
const isLegacy = (version: string | undefined): boolean => version !== undefined && versionInfo(version)?.era === 'legacy';

/** Codes a modern server rejects a request with before it looks at the method (R18, R19, R25, R83). */
const MODERN_REJECTIONS = new Set([-32020, -32021, -32022]);

const intCode = (e: ErrorMessage): number | undefined => (typeof e.code === 'number' && Number.isInteger(e.code) ? e.code : undefined);
const textOf = (e: ErrorMessage): string => (typeof e.message === 'string' ? e.message : '');
const describe = (e: ErrorMessage): string => `${String(e.code)}${typeof e.message === 'string' ? ` "${excerpt(e.message, 80)}"` : ''}`;

const idless = (m: Message): m is ErrorMessage => m.kind === 'error' && (m.id === null || m.id === undefined);

/**
 * The error that answered the request under test: its response if that is an error, else (no
 * response came) an id-less error on the same HTTP exchange, which is what a transport-level
 * rejection looks like. Era-probe answers are left out (see probeAnswer).
 */
function answerError(s: ExchangeSubject): ErrorMessage | undefined {
  if (s.request.from !== 'client') return undefined;
  const e = s.response ? (s.response.kind === 'error' ? s.response : undefined) : s.unmatched.find(idless);
  return e && !probeAnswer(s, e) ? e : undefined;
}

/**
 * A legacy-only server's rejection of a modern request: a 4xx/5xx whose error is none of the
 * modern rejections, and either id-less or in the legacy range (the SDK's -32000 "Bad Request").
 * A dual-era client probes with a modern request and falls back on it (rules.md section 2): not
 * judged by modern rules.
 */
function probeAnswer(s: ExchangeSubject, e: ErrorMessage): boolean {
  if (!isModern(s.version) || (s.status ?? 0) < 400) return false;
  const code = intCode(e);
  if (code === undefined) return idless(e);
  if (MODERN_REJECTIONS.has(code) || code === -32602 || code === -32601) return false;
  return idless(e) || codeRange(code) === 'legacy';
}

/** Whether the request lacks (or has malformed) the _meta keys every modern request must carry (R18). */
function missingMeta(params: unknown): string[] {
  const meta = asRecord(asRecord(params)?._meta);
  const missing: string[] = [];
  if (typeof meta?.[META.protocolVersion] !== 'string') missing.push(META.protocolVersion);
  if (!asRecord(meta?.[META.clientCapabilities])) missing.push(META.clientCapabilities);
  return missing;
}

/** A session the server negotiated a legacy version for: a modern request to it is a probe (rules.md section 2). */
const legacyServer = (s: ExchangeSubject): boolean => s.session.era === 'legacy';

const OUTSIDE = 'an application code outside -32768..-32000';

/** What to send instead of a code the version does not define. */
function fixFor(code: number, version: string | undefined, status?: number): string {
  if (code === -32022 && isLegacy(version)) return 'reject an unsupported version with -32602 and data { supported, requested } (the legacy example), or negotiate one the server supports';
  if (code === -32021 && isLegacy(version)) return 'a legacy server must not rely on a capability the client did not declare in initialize; report a failure with -32603 or a tool result with isError';
  if (code === -32020 && isLegacy(version)) return 'reject a bad MCP-Protocol-Version header with HTTP 400 (no JSON-RPC code is defined for it before 2026-07-28)';
  if (isModern(version) && (code === -32001 || code === -32003 || code === -32004)) {
    const now = { [-32001]: -32020, [-32003]: -32021, [-32004]: -32022 }[code];
    return `${code} was a pre-release draft code: send ${now} (with HTTP 400) if that is what is meant; otherwise a standard code (-32602 invalid params, -32603 internal error) or ${OUTSIDE}`;
  }
  if ((status ?? 0) >= 400) return `a transport rejection is said by its HTTP status (${status}); a JSON-RPC body with it should use -32600 (Invalid Request) or ${OUTSIDE}`;
  return `use the code the spec defines for the case (-32602 invalid params, -32601 method not found, -32603 internal error) or ${OUTSIDE}`;
}

// ---------------------------------------------------------------------------------------------
// The rules

const errorRule = (
  info: Omit<ExchangeRule, 'subject' | 'check' | 'party'>,
  check: (s: ExchangeSubject, e: ErrorMessage) => Report[],
): ExchangeRule => ({
  ...info,
  party: 'server',
  subject: 'exchange',
  check(s) {
    const e = answerError(s);
    return e ? check(s, e) : [];
  },
});

const reservedCode = errorRule(
  {
    id: 'reserved-code',
    group: 'codes',
    severity: 'error',
    versions: ALL,
    summary: 'An error code in JSON-RPC\'s reserved range (-32768..-32020) that the session\'s version does not define',
    source: 'R82, claim 4',
  },
  (s, e) => {
    const code = intCode(e);
    if (code === undefined) return [];
    const range = codeRange(code);
    const at = { pointer: '/response/error/code', evidence: excerpt(e.value.error) };
    if (range === 'reserved') {
      return [
        {
          ...at,
          message: `error code ${code} is reserved by JSON-RPC 2.0 (-32768..-32100) and defined by no spec`,
          fix: fixFor(code, s.version),
        },
      ];
    }
    // -32042 is retired-code's; the others are undefined for this version, or defined by another one.
    if (range !== 'spec-owned' || code === -32042 || s.version === undefined || isDefinedFor(code, s.version)) return [];
    // A modern-only server turning a legacy client away (R22): its 400 carries the modern rejection.
    if (isLegacy(s.version) && MODERN_REJECTIONS.has(code) && (s.status ?? 0) >= 400) return [];
    const def = definitionOf(code);
    const what = def ? `is ${def.name}, defined only in ${definedIn(code)}, not in ${s.version}` : 'is defined by no version of the spec';
    if (isModern(s.version)) {
      return [{ ...at, message: `error code ${code} ${what}: 2026-07-28 forbids emitting undefined codes in -32020..-32099`, fix: fixFor(code, s.version) }];
    }
    return [
      {
        ...at,
        severity: 'warning',
        message: `error code ${code} ${what}; JSON-RPC 2.0 leaves -32000..-32099 to implementations, but MCP now owns -32020..-32099`,
        fix: fixFor(code, s.version),
      },
    ];
  },
);

const legacyRangeCode = errorRule(
  {
    id: 'legacy-range-code',
    group: 'codes',
    severity: 'warning',
    versions: ALL,
    summary: 'An error code in the legacy implementation-defined range -32000..-32019, which new servers should not use',
    source: 'R82, claim 4, rules.md section 5 (1)',
  },
  (s, e) => {
    const code = intCode(e);
    // -32002 is resource not found where defined; where it is not, retired-code and resource-not-found-code judge it.
    if (code === undefined || codeRange(code) !== 'legacy' || code === -32002) return [];
    return [
      {
        message: `error code ${code} is in the legacy implementation-defined range -32000..-32019: clients must not assume a meaning for it`,
        pointer: '/response/error/code',
        evidence: excerpt(e.value.error),
        fix: fixFor(code, s.version, s.status),
      },
    ];
  },
);

const NOT_FOUND = /not found|no such|does not exist|unknown resource/i;

const resourceNotFoundCode = errorRule(
  {
    id: 'resource-not-found-code',
    group: 'codes',
    severity: 'error',
    versions: ALL,
    summary: 'resources/read of a missing resource answered with the wrong code (-32602 from 2026-07-28, -32002 before)',
    source: 'R72, claim 8',
  },
  (s, e) => {
    const code = intCode(e);
    if (s.request.method !== 'resources/read' || code === undefined || s.version === undefined) return [];
    const uri = asRecord(s.request.params)?.uri;
    const at = { pointer: '/response/error/code', evidence: excerpt(e.value.error) };
    if (isModern(s.version)) {
      if (code === -32002) {
        return [
          {
            ...at,
            message: 'resources/read was answered with -32002, retired in 2026-07-28: a missing resource MUST be -32602',
            fix: `answer with -32602 (Invalid params), e.g. data { uri: ${JSON.stringify(typeof uri === 'string' ? excerpt(uri, 80) : 'the uri')} }`,
          },
        ];
      }
      if (code === -32602 || code === -32601 || MODERN_REJECTIONS.has(code) || !NOT_FOUND.test(textOf(e)) || /method not found/i.test(textOf(e))) return [];
      return [
        {
          ...at,
          severity: 'warning',
          message: `resources/read says the resource was not found but answers ${code}: 2026-07-28 requires -32602`,
          fix: 'answer a missing resource with -32602 (Invalid params); keep -32603 for internal failures',
        },
      ];
    }
    if (code === -32002 || code === -32602 || code === -32601 || !NOT_FOUND.test(textOf(e)) || /method not found/i.test(textOf(e))) return [];
    return [
      {
        ...at,
        severity: 'warning',
        message: `resources/read says the resource was not found but answers ${code}: ${s.version} asks for -32002 (Resource not found)`,
        fix: 'answer a missing resource with -32002 and data { uri } (a 2026-07-28 server uses -32602)',
      },
    ];
  },
);

const retiredCode = errorRule(
  {
    id: 'retired-code',
    group: 'codes',
    severity: 'error',
    versions: ALL.filter((v) => v !== '2025-11-25'),
    summary: 'A code the session\'s version does not have: -32002 outside resources/read in 2026-07-28, -32042 outside 2025-11-25',
    source: 'R82, claims 8-9',
  },
  (s, e) => {
    const code = intCode(e);
    if (code === undefined || s.version === undefined || isDefinedFor(code, s.version)) return [];
    const at = { pointer: '/response/error/code', evidence: excerpt(e.value.error) };
    if (code === -32002 && isModern(s.version) && s.request.method !== 'resources/read') {
      return [
        {
          ...at,
          message: `${s.request.method} was answered with -32002 (Resource not found), which 2026-07-28 retired and MUST NOT be emitted`,
          fix: 'answer with -32602 (Invalid params) for a missing resource or bad argument, -32603 for an internal failure',
        },
      ];
    }
    if (code === -32042) {
      return [
        {
          ...at,
          message: `${s.request.method} was answered with -32042 (URL elicitation required), which exists only in 2025-11-25, not in ${s.version}`,
          fix: isModern(s.version)
            ? 'ask for the URL elicitation with an input_required result (MRTR) instead of an error'
            : 'do not require URL elicitation from a client of this version: report the failure with -32603 or a tool result with isError',
        },
      ];
    }
    return [];
  },
);

const NOT_IMPLEMENTED = /method not found|unknown method|not (supported|implemented)|unsupported/i;

const unknownMethodWrongCode: ExchangeRule = {
  id: 'unknown-method-wrong-code',
  group: 'unknown-method',
  severity: 'error',
  versions: ALL,
  party: 'server',
  subject: 'exchange',
  summary: 'A method the server does not implement (or whose capability it did not declare) answered with a code other than -32601',
  source: 'R23, claim 2',
  check(s): Report[] {
    // Only the error that answered this request by its id: a transport rejection is not about the method.
    const e = s.request.from === 'client' && s.response?.kind === 'error' ? s.response : undefined;
    const code = e ? intCode(e) : undefined;
    if (!e || probeAnswer(s, e) || code === undefined || code === -32601 || s.version === undefined) return [];
    const { method } = s.request;
    // Rejections a modern server makes before routing the method: headers, version, capabilities, _meta.
    if (isModern(s.version) && (MODERN_REJECTIONS.has(code) || (code === -32602 && missingMeta(s.request.params).length > 0))) return [];
    const spec = CLIENT_METHODS[s.version]?.has(method) ?? false;
    const capability = capabilityFor(method);
    // 2024-11-05 has no `completions` capability: a server could not declare it.
    if (spec && capability === 'completions' && until('2024-11-05').includes(s.version)) return [];
    if (isUnknownMethod(method, s.version, s.session.serverCapabilities) !== true) return [];
    const text = textOf(e);
    const at = { pointer: '/response/error/code', evidence: excerpt(e.value.error) };
    if (spec) {
      // Only 2026-07-28 says it outright (MethodNotFoundError); legacy versions imply it (R23: warning).
      return [
        {
          ...at,
          ...(isModern(s.version) ? {} : { severity: 'warning' as const }),
          message: `${method} needs the "${capability}" capability, which the server did not declare, and was answered with ${describe(e)} instead of -32601`,
          fix: `answer a method of an undeclared capability with -32601 (Method not found)${isModern(s.version) ? ' and HTTP 404' : ''}, or declare "${capability}" and serve it`,
        },
      ];
    }
    // A method outside the version's list may be an extension the server implements: only its own words say otherwise.
    if (!NOT_IMPLEMENTED.test(text) || /version/i.test(text)) return [];
    return [
      {
        ...at,
        message: `${method} is not implemented (the error says "${excerpt(text, 80)}") but was answered with ${code} instead of -32601`,
        fix: `answer a method the server does not implement with -32601 (Method not found)${isModern(s.version) ? ' and HTTP 404' : ''}`,
      },
    ];
  },
};

const unknownMethodStatus = errorRule(
  {
    id: 'unknown-method-status',
    group: 'status',
    severity: 'error',
    versions: MODERN,
    summary: 'A -32601 (Method not found) JSON body that did not come with HTTP 404',
    source: 'R83, claim 2',
  },
  (s, e) => {
    if (intCode(e) !== -32601 || s.transport !== 'json' || s.status === undefined || s.status === 404 || legacyServer(s)) return [];
    return [
      {
        message: `${s.request.method} was answered with -32601 (Method not found) on HTTP ${s.status}; 2026-07-28 requires 404`,
        pointer: '/status',
        evidence: excerpt(`HTTP ${s.status}: ${describe(e)}`),
        fix: 'send HTTP 404 Not Found with the -32601 JSON-RPC error body',
      },
    ];
  },
);

const PAIRED_400: Readonly<Record<number, string>> = { [-32020]: 'Header mismatch', [-32021]: 'Missing required client capability', [-32022]: 'Unsupported protocol version' };

const errorStatusPairing = errorRule(
  {
    id: 'error-status-pairing',
    group: 'status',
    severity: 'error',
    versions: MODERN,
    summary: '-32020, -32021, -32022, or -32602 for a request missing its required _meta, not sent with HTTP 400',
    source: 'R83, R18, R19, claims 3 and 5-7',
  },
  (s, e) => {
    const code = intCode(e);
    if (code === undefined || s.transport !== 'json' || s.status === undefined || s.status === 400) return [];
    const name = PAIRED_400[code];
    const missing = code === -32602 ? missingMeta(s.request.params) : [];
    if (!name && missing.length === 0) return [];
    const why = name ? `${code} (${name})` : `-32602 for a request missing ${missing.join(' and ')} in params._meta`;
    return [
      {
        message: `${s.request.method} was answered with ${why} on HTTP ${s.status}; 2026-07-28 requires 400`,
        pointer: '/status',
        evidence: excerpt(`HTTP ${s.status}: ${describe(e)}`),
        fix: `send HTTP 400 Bad Request with the ${code} JSON-RPC error body`,
      },
    ];
  },
);

const isStringArray = (v: unknown): boolean => Array.isArray(v) && v.every((x) => typeof x === 'string');

const errorDataRequired = errorRule(
  {
    id: 'error-data-required',
    group: 'codes',
    severity: 'error',
    versions: ['2025-11-25', ...MODERN],
    summary: 'An error whose schema requires data without it: -32022 {supported, requested}, -32021 {requiredCapabilities}, -32042 {elicitations}',
    source: 'R82, R19, R25, claims 6-7',
  },
  (s, e) => {
    const code = intCode(e);
    if (code === undefined || s.version === undefined || !isDefinedFor(code, s.version)) return [];
    const data = asRecord(e.data);
    const out: Report[] = [];
    const lacks = (field: string, want: string, example: string): void => {
      out.push({
        message: `${code} (${definitionOf(code)?.name}) lacks data.${field} (${want})`,
        pointer: data ? pointer('response', 'error', 'data', field) : '/response/error/data',
        evidence: excerpt(e.data === undefined ? e.value.error : e.data),
        fix: `include data.${field}: ${example}`,
      });
    };
    if (code === -32022) {
      if (!isStringArray(data?.supported)) lacks('supported', 'an array of version strings', 'the versions the server supports, e.g. ["2026-07-28"]');
      if (typeof data?.requested !== 'string') {
        const requested = asRecord(asRecord(s.request.params)?._meta)?.[META.protocolVersion];
        lacks('requested', 'a string', `the version the client asked for${typeof requested === 'string' ? `, "${excerpt(requested, 40)}"` : ''}`);
      }
    } else if (code === -32021) {
      if (!asRecord(data?.requiredCapabilities)) lacks('requiredCapabilities', 'a ClientCapabilities object', 'the client capabilities the request needs, e.g. { "elicitation": {} }');
    } else if (code === -32042) {
      const list = data?.elicitations;
      if (!Array.isArray(list)) lacks('elicitations', 'an array of URL elicitation params', '[{ mode: "url", elicitationId, url, message }]');
      else {
        const bad = list.findIndex((x) => typeof asRecord(x)?.elicitationId !== 'string');
        if (bad >= 0) {
          out.push({
            message: `-32042 (URL elicitation required) lists an elicitation without an elicitationId`,
            pointer: pointer('response', 'error', 'data', 'elicitations', bad),
            evidence: excerpt(list[bad]),
            fix: 'give every entry of data.elicitations the URL-mode params: mode "url", elicitationId, url, message',
          });
        }
      }
    }
    return out;
  },
);

const errorShape = errorRule(
  {
    id: 'error-shape',
    group: 'framing',
    severity: 'error',
    versions: ALL,
    summary: 'An error response whose error.code is not an integer or whose error.message is not a string',
    source: 'R5',
  },
  (_s, e) => {
    const out: Report[] = [];
    if (intCode(e) === undefined) {
      out.push({
        message: `error.code is ${e.code === undefined ? 'missing' : `${typeof e.code} ${excerpt(e.code, 40)}`}, not an integer`,
        pointer: '/response/error/code',
        evidence: excerpt(e.value.error),
        fix: 'send error.code as an integer JSON number (e.g. -32603 for an internal error, -32602 for invalid params)',
      });
    }
    if (typeof e.message !== 'string') {
      out.push({
        message: `error.message is ${e.message === undefined ? 'missing' : `a ${e.message === null ? 'null' : typeof e.message}`}, not a string`,
        pointer: '/response/error/message',
        evidence: excerpt(e.value.error),
        fix: 'send error.message as a string: one short sentence saying what went wrong (details go in error.data)',
      });
    }
    return out;
  },
);

const errorIdNull: ExchangeRule = {
  id: 'error-id-null',
  group: 'framing',
  severity: 'error',
  versions: ALL,
  party: 'server',
  subject: 'exchange',
  summary: 'An error response with a null or missing id although the request\'s id was readable',
  source: 'R6, claim 11',
  check(s): Report[] {
    if (s.request.from !== 'client' || s.response) return [];
    const e = s.unmatched.find(idless);
    if (!e) return [];
    const status = s.status ?? 200;
    const how = e.id === null ? 'id null' : 'no id';
    const base = {
      pointer: '/response/id',
      evidence: excerpt(e.value),
      fix: `answer with the request's id (${excerpt(JSON.stringify(s.request.id), 60)}); an error may have a null${versionInfo(s.version)?.errorIdOptional ? ' or absent' : ''} id only when the request's id could not be read`,
    };
    if (status < 400) {
      return [{ ...base, message: `${s.request.method} (id ${excerpt(JSON.stringify(s.request.id), 60)}) was answered with an error with ${how}: the client cannot match it` }];
    }
    // A 4xx/5xx body is a transport-level rejection, which may be id-less from 2025-03-26 on (R6);
    // 2024-11-05 allows it nowhere, and the spec disagrees with itself on it (rules.md section 5 (6)).
    if (s.version === undefined || !until('2024-11-05').includes(s.version)) return [];
    return [
      {
        ...base,
        severity: 'warning',
        message: `${s.request.method} (id ${excerpt(JSON.stringify(s.request.id), 60)}) was rejected with HTTP ${status} and an error with ${how}; 2024-11-05 requires the id`,
      },
    ];
  },
};

const serverDiscoverMissing = errorRule(
  {
    id: 'server-discover-missing',
    group: 'lifecycle',
    severity: 'error',
    versions: MODERN,
    summary: 'server/discover answered with -32601: every 2026-07-28 server must implement it',
    source: 'R20',
  },
  (s, e) => {
    if (s.request.method !== 'server/discover' || intCode(e) !== -32601 || legacyServer(s)) return [];
    return [
      {
        message: `server/discover was answered with ${describe(e)}: 2026-07-28 servers MUST implement it`,
        pointer: '/response/error/code',
        evidence: excerpt(e.value.error),
        fix: 'implement server/discover: return supportedVersions, capabilities, ttlMs and cacheScope (resultType "complete")',
      },
    ];
  },
);

export const CODE_RULES: readonly Rule[] = [
  reservedCode,
  legacyRangeCode,
  retiredCode,
  resourceNotFoundCode,
  errorDataRequired,
  unknownMethodWrongCode,
  unknownMethodStatus,
  errorStatusPairing,
  serverDiscoverMissing,
  errorShape,
  errorIdNull,
];
