// Loads a policy file: YAML with source ranges -> checks (validate.ts) -> compile (compile.ts).
// Every error names the file, line and column, the key, what was found and what is allowed; all
// of them are reported, not just the first.
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { LineCounter, isAlias, isMap, isNode, isPair, isScalar, isSeq, parseDocument, visit, type Document } from 'yaml';
import { RULES } from '../rules/index.ts';
import type { RuleInfo } from '../rules/types.ts';
import { compilePolicy, type PolicyDocument } from './compile.ts';
import type { Policy } from './types.ts';
import { checkDocument, type Issue } from './validate.ts';
import { formatPath, type PolicyPath } from './words.ts';

export interface PolicyError {
  /** The file as it was named (or the source name given to loadPolicyText). */
  file: string;
  /** 1-based; 0 when the error has no place in the file (it could not be read). */
  line: number;
  column: number;
  /** Dotted path of the key: `rules.silent-success.tools[0]`; empty for the file as a whole. */
  key: string;
  /** What was found, and what is allowed. */
  message: string;
}

/** On success, the compiled policy and the document it came from (as validated). */
export type LoadResult = { ok: true; policy: Policy; document: PolicyDocument } | { ok: false; errors: PolicyError[] };

export interface LoadOptions {
  /** Rule ids that have a rewriter: `rewrite` for another rule is a warning. Leave out to skip that check. */
  rewritable?: ReadonlySet<string>;
  /** A relative capture path is resolved against this directory (loadPolicyFile: the file's). */
  baseDir?: string;
  /** The rule catalogue (tests pass their own). */
  rules?: readonly RuleInfo[];
}

/** `config/x.yaml:12:3: rules.unknown-tol: unknown rule or group "unknown-tol"; ...` */
export function formatPolicyError(e: PolicyError): string {
  const place = e.line > 0 ? `${e.file}:${e.line}:${e.column}` : e.file;
  return `${place}: ${e.key === '' ? '' : `${e.key}: `}${e.message}`;
}

/** Reads and loads a policy file. Never throws: an unreadable file is an error like any other. */
export async function loadPolicyFile(path: string, options: LoadOptions = {}): Promise<LoadResult> {
  return (await readPolicyFile(path, options)).result;
}

/** loadPolicyFile, with the text it read (undefined if it could not read it). */
export async function readPolicyFile(path: string, options: LoadOptions = {}): Promise<{ text: string | undefined; result: LoadResult }> {
  return loadPolicyRead(await readPolicyText(path), path, options);
}

/** What one read of a policy file found: its text, or why it could not be read (as a policy error). */
export type PolicyRead = { text: string } | { error: PolicyError };

/** A read of the policy file at `path`, loaded (readPolicyFile's second half, for a caller that read it itself). */
export function loadPolicyRead(
  read: PolicyRead,
  path: string,
  options: LoadOptions = {},
): { text: string | undefined; result: LoadResult } {
  if ('error' in read) return { text: undefined, result: { ok: false, errors: [read.error] } };
  return { text: read.text, result: loadPolicyText(read.text, path, { baseDir: dirname(resolve(path)), ...options }) };
}

/** The policy file's text, or why it cannot be read. */
export async function readPolicyText(path: string): Promise<PolicyRead> {
  try {
    return { text: await readFile(path, 'utf8') };
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'it is a directory' : e.message;
    return { error: { file: path, line: 0, column: 0, key: '', message: `cannot read the policy file: ${why}` } };
  }
}

const YAML_MESSAGES: Record<string, (detail: string, source: string) => string> = {
  DUPLICATE_KEY: (_d, key) => `duplicate key ${JSON.stringify(key)}; a key may appear once in a mapping`,
  MULTIPLE_DOCS: () => 'the file holds more than one YAML document (---); a policy is one document',
  BAD_DQ_ESCAPE: (d) =>
    `YAML syntax error: ${d} (in double quotes YAML reads backslashes as escapes: write regular expressions in single quotes)`,
};

/** Loads a policy from its text; `sourceName` is what errors and `policy.source` call it. Pure. */
export function loadPolicyText(text: string, sourceName: string, options: LoadOptions = {}): LoadResult {
  const rules = options.rules ?? RULES;
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, schema: 'core' });
  const at = (offset: number, key: string, message: string): PolicyError => {
    const { line, col } = lineCounter.linePos(offset);
    return { file: sourceName, line, column: col, key, message };
  };

  const syntax = [...doc.errors, ...doc.warnings].map((e) => {
    const message =
      YAML_MESSAGES[e.code]?.(e.message, keyAt(doc, e.pos[0]) ?? text.slice(e.pos[0], e.pos[1])) ?? `YAML syntax error: ${e.message}`;
    return at(e.pos[0], '', message);
  });
  if (syntax.length > 0) return { ok: false, errors: sortErrors(syntax) };
  if (doc.contents === null) {
    return { ok: false, errors: [at(0, '', 'the policy is empty; expected a mapping such as "mode: audit" (write {} for every default)')] };
  }
  const keyErrors = complexKeys(doc).map((offset) => at(offset, '', `expected a plain key (a name), found ${describeKeyAt(text, offset)}`));
  if (keyErrors.length > 0) return { ok: false, errors: sortErrors(keyErrors) };

  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    // An alias without its anchor, or too many aliases (a "billion laughs" file).
    let offset = 0;
    visit(doc, {
      Alias(_, alias) {
        if (alias.resolve(doc) !== undefined) return undefined;
        offset = alias.range?.[0] ?? 0;
        return visit.BREAK;
      },
    });
    return { ok: false, errors: [at(offset, '', `YAML: ${(err as Error).message}`)] };
  }

  const locate = (path: PolicyPath, on: 'key' | 'value' = 'value'): number => offsetOf(doc, path, on);
  const issues: Issue[] = checkDocument(value, rules);
  if (issues.length > 0) {
    return { ok: false, errors: sortErrors(issues.map((i) => at(locate(i.path, i.on), formatPath(i.path), i.message))) };
  }
  const policy = compilePolicy(value as PolicyDocument, {
    source: sourceName,
    rules,
    ...(options.rewritable ? { rewritable: options.rewritable } : {}),
    ...(options.baseDir ? { baseDir: options.baseDir } : {}),
    locate: (path) => {
      const { line, col } = lineCounter.linePos(locate(path));
      return { line, column: col };
    },
  });
  return { ok: true, policy, document: value as PolicyDocument };
}

function sortErrors(errors: PolicyError[]): PolicyError[] {
  return errors
    .map((e, i) => [e, i] as const)
    .sort(([a, i], [b, j]) => a.line - b.line || a.column - b.column || i - j)
    .map(([e]) => e);
}

/** Offsets of map keys that are not plain scalars (a list or mapping as a key, or no key at all). */
function complexKeys(doc: Document): number[] {
  const offsets: number[] = [];
  visit(doc, {
    Pair(_, pair, path) {
      if (isScalar(pair.key) && pair.key.value !== null) return;
      const parent = path[path.length - 1];
      const start = isNode(pair.key)
        ? pair.key.range?.[0]
        : isNode(pair.value)
          ? pair.value.range?.[0]
          : isNode(parent)
            ? parent.range?.[0]
            : 0;
      offsets.push(start ?? 0);
    },
  });
  return offsets;
}

/** The text of the scalar key that starts at `offset`, if there is one. */
function keyAt(doc: Document, offset: number): string | undefined {
  let key: string | undefined;
  visit(doc, {
    Pair(_, pair) {
      if (isScalar(pair.key) && pair.key.range?.[0] === offset) {
        key = String(pair.key.value);
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return key;
}

function describeKeyAt(text: string, offset: number): string {
  const c = text[offset];
  if (c === '[' || c === '-') return 'a list';
  if (c === '{') return 'a mapping';
  if (c === '?') return 'a complex key (?)';
  return 'an empty key';
}

/** Where `path` is in the source: the key's start (`on: 'key'`), else its value's (or the key's, if the value is empty). */
function offsetOf(doc: Document, path: PolicyPath, on: 'key' | 'value'): number {
  const startOf = (n: unknown): number | undefined => {
    const range = isNode(n) ? n.range : undefined;
    return range && range[1] > range[0] ? range[0] : undefined;
  };
  let node: unknown = doc.contents;
  let best = startOf(node) ?? 0;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i]!;
    if (isAlias(node)) node = node.resolve(doc);
    let keyStart: number | undefined;
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg));
      if (!pair) break;
      keyStart = startOf(pair.key);
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number' && seg < node.items.length) {
      node = node.items[seg];
    } else break;
    if (i === path.length - 1 && on === 'key' && keyStart !== undefined) return keyStart;
    best = startOf(node) ?? keyStart ?? best;
  }
  return best;
}
