// Checks a policy document (the YAML file as plain JS values) and says what is wrong in words a
// user can act on: where, what was found, what is allowed, and the closest allowed value. Two
// passes: the JSON Schema (ajv, every error), whose errors are translated; then the checks a schema
// cannot express well (durations, sizes and URLs by the command line's own parsers, regular
// expressions, entries that set nothing). Pure: values in, issues out.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { parseDuration, parseSize, parseUrl } from './cli-options.ts';
import { RULES } from '../rules/index.ts';
import type { RuleInfo } from '../rules/types.ts';
import { validate as precompiled } from './policy-validator.generated.ts';
import { ACTIONS, KEYS, SEVERITIES, buildPolicySchema, ruleGroups } from './schema.ts';
import { describeValue, didYouMean, formatPath, type PolicyPath } from './words.ts';

/** One problem at one place: `on: 'key'` points at the key itself (unknown keys), else at its value. */
export interface Issue {
  path: PolicyPath;
  message: string;
  on?: 'key' | 'value';
}

type Kind = 'root' | 'duration' | 'size' | 'url' | 'regex' | 'globs' | 'glob' | 'path';

const KIND_PHRASE: Record<Kind, string> = {
  root: `a mapping of policy keys (${KEYS[''].join(', ')})`,
  duration: 'a duration such as 500ms, 30s, 5m or a number of milliseconds',
  size: 'a size such as 512kb, 4mib or a number of bytes',
  url: 'an http(s) URL such as http://127.0.0.1:3000/mcp',
  regex: "a regular expression (JavaScript syntax, in single quotes: '\\bfoo\\b')",
  globs: "a list of name patterns such as ['tools/call'] or ['send_*']",
  glob: "a name pattern such as 'tools/call' or 'send_*' (* any run of characters, ? one)",
  path: 'a file path',
};

const KINDS: Record<string, Kind> = {
  '': 'root',
  'upstream.url': 'url',
  'upstream.timeout': 'duration',
  'upstream.idleTimeout': 'duration',
  'upstream.connectTimeout': 'duration',
  'limits.maxRequestBody': 'size',
  'limits.auditBody': 'size',
  'limits.auditEvent': 'size',
  'limits.sessionIdle': 'duration',
  'patterns.leaks[].pattern': 'regex',
  'patterns.silentSuccess.add[]': 'regex',
  'capture.path': 'path',
  'rules.NAME.methods': 'globs',
  'rules.NAME.tools': 'globs',
  'rules.NAME.methods[]': 'glob',
  'rules.NAME.tools[]': 'glob',
  'rules.NAME[].methods': 'globs',
  'rules.NAME[].tools': 'globs',
  'rules.NAME[].methods[]': 'glob',
  'rules.NAME[].tools[]': 'glob',
};

/** The path with list indexes as `[]` and rule names as `NAME`: the key of KINDS. */
function shape(path: PolicyPath): string {
  const generic = path.map((seg, i) => (typeof seg === 'number' ? -1 : i === 1 && path[0] === 'rules' ? 'NAME' : seg));
  return formatPath(generic).replace(/\[-1\]/g, '[]');
}

const kindOf = (path: PolicyPath): Kind | undefined => KINDS[shape(path)];

const TYPE_PHRASE: Record<string, string> = {
  object: 'a mapping',
  array: 'a list',
  string: 'a string',
  boolean: 'true or false',
  number: 'a number',
  integer: 'a whole number',
};

function expected(path: PolicyPath, type: unknown): string {
  const kind = kindOf(path);
  if (kind) return KIND_PHRASE[kind];
  const types = (Array.isArray(type) ? type : [type]).filter((t) => t !== 'null');
  return types.map((t) => TYPE_PHRASE[String(t)] ?? String(t)).join(' or ');
}

/** JSON Pointer -> path, with list indexes as numbers (told apart by the value they index). */
function toPath(pointer: string, root: unknown): Array<string | number> {
  if (pointer === '') return [];
  const path: Array<string | number> = [];
  let node: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      path.push(Number(seg));
      node = node[Number(seg)];
    } else {
      path.push(seg);
      node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[seg] : undefined;
    }
  }
  return path;
}

const where = (path: PolicyPath): string => (path.length === 0 ? 'at the top level' : `in ${formatPath(path)}`);

/**
 * How the policy schema is compiled. validateSchema off: the schema is ours, checked against the
 * meta-schema by a test (policy-load.test.ts); checked here it cost ~35 ms of every start.
 */
export const POLICY_AJV_OPTIONS = { allErrors: true, verbose: true, allowUnionTypes: true, strict: true, validateSchema: false } as const;

// The catalogue's validator is compiled ahead (policy-validator.generated.ts): compiling it here
// cost ~50-60 ms of every start. Other rule lists (tests) are compiled when first used.
const validators = new WeakMap<readonly RuleInfo[], ValidateFunction>([[RULES, precompiled as ValidateFunction]]);

function validatorFor(rules: readonly RuleInfo[]): ValidateFunction {
  let validate = validators.get(rules);
  if (!validate) {
    validate = new Ajv(POLICY_AJV_OPTIONS).compile(buildPolicySchema(rules));
    validators.set(rules, validate);
  }
  return validate;
}

/** Every problem of `doc` (a non-empty YAML document as JS values), in no particular order. */
export function checkDocument(doc: unknown, rules: readonly RuleInfo[]): Issue[] {
  const validate = validatorFor(rules);
  const schemaIssues = validate(doc) ? [] : translate(validate.errors ?? [], doc, rules);
  const issues = [...schemaIssues, ...semanticIssues(doc)];
  const seen = new Set<string>();
  return issues.filter((i) => {
    const id = `${formatPath(i.path)}\n${i.message}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

function translate(errors: readonly ErrorObject[], doc: unknown, rules: readonly RuleInfo[]): Issue[] {
  // The only unions in the schema are a rule's entry (a setting or a list of them) and a setting
  // (an action, or a mapping). Keep the errors of the branch the value's type chose; a value of
  // neither type gets one message of its own.
  const issues: Issue[] = [];
  const unions = new Map<string, unknown>();
  for (const e of errors) if (e.keyword === 'anyOf') unions.set(e.instancePath, e.data);
  // The innermost union an error sits in decides (a list item inside a rule's entry).
  const innermostFirst = [...unions].sort((a, b) => b[0].length - a[0].length);
  const kept = errors.filter((e) => {
    for (const [at, value] of innermostFirst) {
      const inside = e.instancePath === at || e.instancePath.startsWith(`${at}/`);
      if (!inside) continue;
      if (typeof value === 'string') return e.instancePath === at && e.keyword === 'enum';
      // A mapping, or a list of settings (each item is a union of its own): the branch's errors.
      if (value !== null && typeof value === 'object')
        return (
          !(e.instancePath === at && ['enum', 'anyOf', 'type', 'minItems'].includes(e.keyword)) ||
          (Array.isArray(value) && e.keyword === 'minItems')
        );
      return false;
    }
    return true;
  });
  for (const [at, value] of unions) {
    const isAction = typeof value === 'string';
    const isMapping = value !== null && typeof value === 'object';
    if (!isAction && !isMapping) {
      issues.push({
        path: toPath(at, doc),
        message: `expected an action (${ACTIONS.join('|')}), a mapping such as { action: rewrite, severity: error, tools: ['send_*'] }, or a list of those, found ${describeValue(value)}`,
      });
    }
  }
  for (const e of kept) {
    const issue = translateOne(e, doc, rules);
    if (issue) issues.push(issue);
  }
  return issues;
}

function translateOne(e: ErrorObject, doc: unknown, rules: readonly RuleInfo[]): Issue | undefined {
  const path = toPath(e.instancePath, doc);
  const found = describeValue(e.data);
  switch (e.keyword) {
    case 'type':
      return { path, message: `expected ${expected(path, e.params.type)}, found ${found}` };
    case 'enum': {
      const allowed = (e.params.allowedValues as unknown[]).map(String);
      if (e.propertyName !== undefined) return unknownRule(e.propertyName, [...path, e.propertyName], rules);
      if (shape(path) === 'patterns.leaks[].rule') return notALeakRule(e.data, path, rules, allowed);
      return { path, message: `expected one of ${allowed.join('|')}, found ${found}${didYouMean(e.data, allowed)}` };
    }
    case 'additionalProperties': {
      const key = String(e.params.additionalProperty);
      const allowed = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      return {
        path: [...path, key],
        on: 'key',
        message: `unknown key "${key}" ${where(path)}; allowed: ${allowed.join(', ')}${didYouMean(key, allowed)}`,
      };
    }
    case 'required': {
      const required = (e.parentSchema as { required?: string[] } | undefined)?.required ?? [];
      return { path, message: `missing key "${String(e.params.missingProperty)}"; required: ${required.join(', ')}` };
    }
    case 'minItems': {
      const last = String(path[path.length - 1]);
      return kindOf(path) === 'globs'
        ? {
            path,
            message: `expected at least one name pattern such as '${last === 'tools' ? 'send_*' : 'tools/call'}', found an empty list (leave ${last} out to match every name)`,
          }
        : { path, message: `expected ${expected(path, 'array')} with at least one item, found an empty list` };
    }
    case 'minLength':
      return { path, message: `expected ${kindOf(path) ? KIND_PHRASE[kindOf(path)!] : 'a non-empty string'}, found an empty string` };
    case 'minimum':
      // Durations and sizes are checked by their parsers below, with better messages.
      if (kindOf(path) !== undefined) return undefined;
      return { path, message: `expected a whole number of at least ${String(e.params.limit)}, found ${found}` };
    // Durations, sizes and URLs are checked by their parsers below, with better messages.
    case 'pattern':
    case 'propertyNames':
      return undefined;
    default:
      return { path, message: `${e.message ?? 'invalid'}, found ${found}` };
  }
}

function unknownRule(name: string, path: PolicyPath, rules: readonly RuleInfo[]): Issue {
  const groups = ruleGroups(rules);
  const names = [...rules.map((r) => r.id), ...groups];
  return {
    path,
    on: 'key',
    message: `unknown rule or group "${name}"; allowed: a rule id (see mcp-warden rules) or a group: ${groups.join(', ')}${didYouMean(name, names)}`,
  };
}

function notALeakRule(value: unknown, path: PolicyPath, rules: readonly RuleInfo[], allowed: readonly string[]): Issue {
  const rule = rules.find((r) => r.id === value);
  const what = rule ? `"${rule.id}" is not a leak rule (its group is ${rule.group})` : `unknown leak rule ${describeValue(value)}`;
  return { path, message: `${what}; allowed: ${allowed.join(', ')}${rule ? '' : didYouMean(value, allowed)}` };
}

// ---------------------------------------------------------------------------------------------
// Checks beyond the schema

type Rec = Record<string, unknown>;
const asRec = (v: unknown): Rec | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Rec) : undefined);
const isScalarText = (v: unknown): v is string | number => typeof v === 'string' || typeof v === 'number';

function semanticIssues(doc: unknown): Issue[] {
  const issues: Issue[] = [];
  const root = asRec(doc);
  if (!root) return issues;
  const check = (section: string, key: string, kind: 'duration' | 'size' | 'url'): void => {
    const value = asRec(root[section])?.[key];
    if (!isScalarText(value)) return;
    try {
      if (kind === 'duration') parseDuration(String(value));
      else if (kind === 'size') parseSize(String(value));
      else if (typeof value === 'string') parseUrl(value);
    } catch {
      issues.push({ path: [section, key], message: `expected ${KIND_PHRASE[kind]}, found ${describeValue(value)}` });
    }
  };
  check('upstream', 'url', 'url');
  for (const key of ['timeout', 'idleTimeout', 'connectTimeout']) check('upstream', key, 'duration');
  for (const key of ['maxRequestBody', 'auditBody', 'auditEvent']) check('limits', key, 'size');
  check('limits', 'sessionIdle', 'duration');

  const patterns = asRec(root.patterns);
  const leaks = patterns?.leaks;
  if (Array.isArray(leaks)) {
    leaks.forEach((leak, i) => {
      const pattern = asRec(leak)?.pattern;
      if (typeof pattern === 'string' && pattern !== '') issues.push(...regexIssues(pattern, 'g', ['patterns', 'leaks', i, 'pattern']));
    });
  }
  const add = asRec(patterns?.silentSuccess)?.add;
  if (Array.isArray(add)) {
    add.forEach((pattern, i) => {
      if (typeof pattern === 'string' && pattern !== '')
        issues.push(...regexIssues(pattern, 'im', ['patterns', 'silentSuccess', 'add', i]));
    });
  }

  const entries = asRec(root.rules) ?? {};
  for (const [name, entry] of Object.entries(entries)) {
    const settings = Array.isArray(entry) ? entry.map((e, i) => [e, ['rules', name, i]] as const) : [[entry, ['rules', name]] as const];
    for (const [setting, path] of settings) {
      const e = asRec(setting);
      if (e && e.action === undefined && e.severity === undefined) {
        issues.push({
          path: [...path],
          message: `the entry sets neither action nor severity; allowed: { action: ${ACTIONS.join('|')}, severity: ${SEVERITIES.join('|')}, methods: [...], tools: [...] }`,
        });
      }
    }
  }
  return issues;
}

/** Problems of one regular expression: syntax, a backspace from a double-quoted "\b", matching nothing at all. */
export function regexIssues(source: string, flags: string, path: PolicyPath): Issue[] {
  let re: RegExp;
  try {
    re = new RegExp(source, flags.replace('g', ''));
  } catch (err) {
    const detail = String((err as Error).message).replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '');
    return [{ path, message: `invalid regular expression: ${detail}, found ${describeValue(source)}` }];
  }
  if (source.includes('\b')) {
    return [
      {
        path,
        message: `the pattern holds a backspace character: in double quotes YAML reads "\\b" as a backspace; write the pattern in single quotes ('\\bword\\b')`,
      },
    ];
  }
  if (re.test('')) {
    return [
      {
        path,
        message: `the pattern ${describeValue(source)} matches an empty text, so it would match every text; allowed: a regular expression that needs at least one character`,
      },
    ];
  }
  return [];
}
