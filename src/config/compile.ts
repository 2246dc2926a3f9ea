// A validated policy document compiled into the form the proxy consults on every finding (types.ts),
// with the warnings of things that load but will not do what they seem to say. Pure.
import { resolve } from 'node:path';
import { parseDuration, parseSize, parseUrl } from './cli-options.ts';
import { ALL_CLIENT_METHODS } from '../mcp/methods.ts';
import { RULES } from '../rules/index.ts';
import type { RuleInfo, Severity } from '../rules/types.ts';
import { DEFAULT_MARKER } from './schema.ts';
import type { Action, FindingScope, Mode, Policy, RuleSetting, UnknownToolAnswer } from './types.ts';
import { closest, formatPath, listSome, plural, type PolicyPath } from './words.ts';

/** One rule setting as the file writes it: an action, or a mapping. */
export type RuleSettingDocument = Action | { action?: Action; severity?: Severity; methods?: string[]; tools?: string[] };

/** A rule's entry: one setting, or a list of them tried in order (the first whose scope matches wins). */
export type RuleEntryDocument = RuleSettingDocument | RuleSettingDocument[];

type Section<T> = T | null | undefined;

/** The policy file's content once it validated (see schema.ts); empty sections may be null. */
export interface PolicyDocument {
  mode?: Mode;
  upstream?: Section<{
    url?: string;
    timeout?: string | number;
    idleTimeout?: string | number;
    connectTimeout?: string | number;
    hostHeader?: 'client' | 'upstream';
    transport?: 'auto' | 'sse' | 'streamable-http';
  }>;
  security?: Section<{ allowedHosts?: string[]; allowedOrigins?: string[] }>;
  scope?: Section<{ passthrough?: Section<string[]>; unjudged?: 'relay' | 'block' }>;
  limits?: Section<{
    maxRequestBody?: string | number;
    auditBody?: string | number;
    auditEvent?: string | number;
    maxSessions?: number;
    sessionIdle?: string | number;
  }>;
  log?: Section<{ level?: string; arguments?: 'off' | 'redacted' | 'full' }>;
  redaction?: Section<{ marker?: string }>;
  answers?: Section<{ unknownTool?: UnknownToolAnswer }>;
  patterns?: Section<{
    leaks?: Section<Array<{ rule: string; pattern: string }>>;
    silentSuccess?: Section<{ add?: Section<string[]>; replace?: boolean }>;
  }>;
  capture?: Section<{ path: string }>;
  defaults?: Section<{ action?: Action }>;
  rules?: Section<Record<string, RuleEntryDocument>>;
}

export interface CompileOptions {
  /** Where the document came from: a file path, or "(built-in defaults)". */
  source: string;
  /** Rule ids that have a rewriter; `rewrite` for any other rule is a warning. Leave out to skip that check. */
  rewritable?: ReadonlySet<string>;
  /** A relative capture path is resolved against this directory (the policy file's). */
  baseDir?: string;
  /** The rule catalogue (tests pass their own). */
  rules?: readonly RuleInfo[];
  /** Where a key is in the file (the loader knows): warnings then read `source:line:col: key: ...`, in file order. */
  locate?: (path: PolicyPath) => { line: number; column: number };
}

/** Flags for the compiled leak and silent-success patterns (documented in the schema). */
export const LEAK_FLAGS = 'g';
export const SILENT_SUCCESS_FLAGS = 'im';

/** The rules that say an answer (or request) was not judged in full: `scope.unjudged` is their action. */
const COVERAGE_RULES: ReadonlySet<string> = new Set(['unaudited-response', 'unreadable-request', 'unreadable-response']);

/** `*` any run of characters, `?` one; anything else literally. One regex for a list of globs. */
export function globsToRegExp(globs: readonly string[]): RegExp {
  const one = (g: string): string =>
    [...g].map((c) => (c === '*' ? '[\\s\\S]*' : c === '?' ? '[\\s\\S]' : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('');
  return new RegExp(`^(?:${globs.map(one).join('|')})$`, 'u');
}

interface Entry {
  action: Action | undefined;
  severity: Severity | undefined;
  methods: RegExp | undefined;
  tools: RegExp | undefined;
}

const matches = (e: Entry, scope: FindingScope): boolean =>
  (e.methods === undefined || (scope.method !== undefined && e.methods.test(scope.method))) &&
  (e.tools === undefined || (scope.tool !== undefined && e.tools.test(scope.tool)));

/** Methods the protocol defines, both directions, notifications too: a `methods` glob matching none of them is a warning. */
export const KNOWN_METHODS: readonly string[] = [
  ...new Set([
    ...ALL_CLIENT_METHODS,
    'ping',
    'sampling/createMessage',
    'elicitation/create',
    'roots/list',
    'notifications/initialized',
    'notifications/cancelled',
    'notifications/progress',
    'notifications/message',
    'notifications/resources/updated',
    'notifications/resources/list_changed',
    'notifications/tools/list_changed',
    'notifications/prompts/list_changed',
    'notifications/roots/list_changed',
    'notifications/elicitation/complete',
    'notifications/tasks/status',
  ]),
].sort();

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !(value instanceof RegExp) && !(value instanceof URL)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** The policy of a validated document. Throws only if the document did not validate. */
export function compilePolicy(doc: PolicyDocument, options: CompileOptions): Policy {
  const rules = options.rules ?? RULES;
  const found: Array<{ path: PolicyPath; message: string }> = [];
  const warn = (path: PolicyPath, message: string): void => {
    found.push({ path, message });
  };

  const defaultAction: Action = doc.defaults?.action ?? 'log';
  const entries = new Map<string, Entry[]>();
  for (const [name, raw] of Object.entries(doc.rules ?? {})) {
    const list = Array.isArray(raw) ? raw : [raw];
    entries.set(
      name,
      list.map((item, i) => {
        const e = typeof item === 'string' ? { action: item } : item;
        // Where a key of this setting is: rules.NAME.key for a single setting, rules.NAME[i].key in a list.
        const at = (...rest: Array<string | number>): PolicyPath =>
          Array.isArray(raw) ? ['rules', name, i, ...rest] : ['rules', name, ...rest];
        if (typeof item !== 'string') {
          if (item.action === 'off' && item.severity !== undefined) warn(at('severity'), 'has no effect: the rule is off');
          item.methods?.forEach((glob, j) => {
            const re = globsToRegExp([glob]);
            if (!KNOWN_METHODS.some((m) => re.test(m))) {
              const near = closest(glob, KNOWN_METHODS);
              warn(at('methods', j), `"${glob}" matches no method MCP defines${near ? `; did you mean "${near}"?` : ''}`);
            }
          });
        }
        return {
          action: e.action,
          severity: e.severity,
          methods: e.methods ? globsToRegExp(e.methods) : undefined,
          tools: e.tools ? globsToRegExp(e.tools) : undefined,
        };
      }),
    );
  }

  if (options.rewritable) rewriteWarnings(rules, entries, defaultAction, options.rewritable, warn);

  const silent = doc.patterns?.silentSuccess;
  const silentAdd = silent?.add ?? [];
  if (silent?.replace === true && silentAdd.length === 0) {
    warn(
      ['patterns', 'silentSuccess', 'replace'],
      'true with no patterns in add: silent-success will flag nothing (set the rule off instead)',
    );
  }

  const warnings = placeWarnings(found, options);

  const dur = (v: string | number | undefined): number | undefined => (v === undefined ? undefined : parseDuration(String(v)));
  const size = (v: string | number | undefined): number | undefined => (v === undefined ? undefined : parseSize(String(v)));
  const up = doc.upstream ?? {};
  const lim = doc.limits ?? {};
  const capturePath = doc.capture?.path;

  const unjudged = doc.scope?.unjudged ?? 'relay';
  const policy: Policy = {
    source: options.source,
    mode: doc.mode ?? 'audit',
    setting(scope: FindingScope): RuleSetting {
      let action: Action | undefined;
      let severity: Severity | undefined;
      // The rule's own entry, then its group's: in each, the first setting whose scope matches.
      const own = entries.get(scope.rule)?.find((e) => matches(e, scope));
      const group = scope.group === scope.rule ? undefined : entries.get(scope.group)?.find((e) => matches(e, scope));
      for (const e of [own, group]) {
        if (e === undefined) continue;
        action ??= e.action;
        severity ??= e.severity;
      }
      // What cannot be judged: scope.unjudged decides, unless `rules` named the rule (or its group).
      if (action === undefined && unjudged === 'block' && COVERAGE_RULES.has(scope.rule)) action = 'block';
      return { action: action ?? defaultAction, severity: severity ?? scope.severity };
    },
    upstream: stripUndefined({
      url: up.url === undefined ? undefined : parseUrl(up.url),
      headersTimeoutMs: dur(up.timeout),
      bodyTimeoutMs: dur(up.idleTimeout),
      connectTimeoutMs: dur(up.connectTimeout),
      hostHeader: up.hostHeader,
      transport: up.transport,
    }),
    security: stripUndefined({ allowedHosts: doc.security?.allowedHosts, allowedOrigins: doc.security?.allowedOrigins }),
    scope: { passthrough: doc.scope?.passthrough ?? [], unjudged: doc.scope?.unjudged ?? 'relay' },
    limits: stripUndefined({
      maxRequestBytes: size(lim.maxRequestBody),
      auditBodyBytes: size(lim.auditBody),
      auditEventBytes: size(lim.auditEvent),
      maxSessions: lim.maxSessions,
      sessionIdleMs: dur(lim.sessionIdle),
    }),
    log: { ...stripUndefined({ level: doc.log?.level }), arguments: doc.log?.arguments ?? 'redacted' },
    redactionMarker: doc.redaction?.marker ?? DEFAULT_MARKER,
    answers: { unknownTool: doc.answers?.unknownTool ?? 'spec' },
    patterns: {
      leaks: (doc.patterns?.leaks ?? []).map((l) => ({ rule: l.rule, re: new RegExp(l.pattern, LEAK_FLAGS) })),
      silentSuccess: silentAdd.map((p) => new RegExp(p, SILENT_SUCCESS_FLAGS)),
      replaceSilentSuccess: silent?.replace === true,
    },
    capture: capturePath === undefined ? undefined : { path: options.baseDir ? resolve(options.baseDir, capturePath) : capturePath },
    warnings,
  };
  return deepFreeze(policy);
}

/** Warns where `rewrite` can reach a rule that has no rewriter: by the rule's entry, its group's, or the default. */
function rewriteWarnings(
  rules: readonly RuleInfo[],
  entries: ReadonlyMap<string, readonly Entry[]>,
  defaultAction: Action,
  rewritable: ReadonlySet<string>,
  warn: (path: PolicyPath, message: string) => void,
): void {
  const unreachable = new Map<string, string[]>(); // "rules\0name" or "defaults\0action" -> rule ids
  const add = (key: string, id: string): void => {
    unreachable.set(key, [...(unreachable.get(key) ?? []), id]);
  };
  for (const rule of rules) {
    if (rewritable.has(rule.id)) continue;
    const chain: Array<[string, readonly Entry[]]> = [
      [rule.id, entries.get(rule.id) ?? []],
      [rule.group, rule.group === rule.id ? [] : (entries.get(rule.group) ?? [])],
    ];
    let settled = false;
    for (const [name, list] of chain) {
      for (const e of list) {
        if (e.action === undefined) continue;
        if (e.action === 'rewrite') add(`rules\0${name}`, rule.id);
        if (e.methods === undefined && e.tools === undefined) {
          settled = true;
          break;
        }
      }
      if (settled) break;
    }
    if (!settled && defaultAction === 'rewrite') add('defaults\0action', rule.id);
  }
  for (const [key, ids] of unreachable) {
    const path = key.split('\0');
    const single = path[0] === 'rules' && ids.length === 1 && ids[0] === path[1];
    warn(
      path,
      single
        ? `rewrite: ${ids[0]} has no rewriter, so its findings are logged, not rewritten`
        : `rewrite: ${plural(ids.length, 'rule')} without a rewriter (${listSome(ids)}): their findings are logged, not rewritten`,
    );
  }
}

function placeWarnings(found: ReadonlyArray<{ path: PolicyPath; message: string }>, options: CompileOptions): string[] {
  const { locate, source } = options;
  if (!locate) return found.map((w) => `${source}: ${formatPath(w.path)}: ${w.message}`);
  return found
    .map((w) => ({ ...w, at: locate(w.path) }))
    .sort((a, b) => a.at.line - b.at.line || a.at.column - b.at.column)
    .map((w) => `${source}:${w.at.line}:${w.at.column}: ${formatPath(w.path)}: ${w.message}`);
}

function stripUndefined<T extends object>(o: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}

/** No policy file: audit mode, every rule logged with its own severity, nothing captured. (Nothing asks for a rewrite, so `rewritable` changes nothing; it is accepted for symmetry with the loader.) */
export function defaultPolicy(rewritable?: ReadonlySet<string>): Policy {
  return compilePolicy({}, { source: '(built-in defaults)', ...(rewritable ? { rewritable } : {}) });
}
