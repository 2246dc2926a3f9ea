// One bounded, iterative walker over JSON values, shared by every rule and rewriter that reads a
// value as a whole (the leak rules and their rewriter, the depth checks of unreadable-request and
// unreadable-response). No recursion: a value nested 100,000 levels deep costs a loop, never the
// call stack. What a walker does not read because a bound stopped it is reported (a `Cut`), so a
// rule can say so instead of passing in silence.
//
// The bounds, and why these numbers (issue 10 item 6):
// - depth 128 levels of objects and arrays, the message itself being level 1. serde_json (the
//   Rust SDK's parser) refuses JSON nested deeper than 128, System.Text.Json (the C# SDK's) deeper
//   than 64, Ruby's JSON deeper than 100: no working MCP peer exchanges a message deeper than this,
//   while JSON Schemas (tools/list, ~10-30 levels) and tool results stay far below it. It is also
//   far below where V8's own recursive JSON.stringify and structuredClone give up (~2,000-5,000
//   levels here), so everything the proxy hands on stays serializable.
// - nodes 100,000 values read per walk: an error's data or an isError result's content is a few
//   dozen values; 100,000 is 50x what the leak rules used to read (2,000) and a few milliseconds.
// - text 1 MiB of strings read per walk: real error text is under 16 KiB (what was read before);
//   1 MiB is the SSE event audit limit (limits.auditEvent), so no event the proxy audits by
//   default can hold more, and it bounds what the leak patterns cost on hostile text (~0.3 s
//   measured for 1 MiB of adversarial input, all patterns).
// Real traffic never reaches them; past them, the message gets a finding and the policy decides.

import { READ_BOUNDS } from '../config/defaults.ts';
import { pointer } from '../codec/json-pointer.ts';

/** A segment of a JSON Pointer path. */
export type Segment = string | number;

export interface WalkBounds {
  /** Levels of objects and arrays (the value walked from is at `WalkOptions.depth`). */
  depth: number;
  /** Values read (containers and primitives). */
  nodes: number;
  /** Characters of strings read. */
  text: number;
}

export const WALK_BOUNDS: Readonly<WalkBounds> = Object.freeze({ ...READ_BOUNDS, text: 1024 * 1024 });

/** Why a walk stopped before the end, and where (path from the value walked). */
export interface Cut {
  reason: 'depth' | 'nodes' | 'text';
  path: Segment[];
}

/** What is left to read; walks that share one budget (a message's error text) draw from it in turn. */
export interface Budget {
  nodes: number;
  text: number;
  /** The first bound that stopped a walk drawing from this budget. */
  cut?: Cut;
}

export const budget = (bounds: Readonly<WalkBounds> = WALK_BOUNDS): Budget => ({ nodes: bounds.nodes, text: bounds.text });

interface Frame {
  value: unknown;
  parent: Frame | undefined;
  key: Segment;
  depth: number;
}

function pathOf(frame: Frame, base: readonly Segment[]): Segment[] {
  const out: Segment[] = [];
  for (let f: Frame | undefined = frame; f?.parent !== undefined; f = f.parent) out.push(f.key);
  return [...base, ...out.reverse()];
}

export interface WalkOptions {
  /** Path of the value walked, prefixed to every path reported. */
  path?: readonly Segment[];
  /** Level of the value walked when it is a container (1 for a message; 3 for a message's error.data). */
  depth?: number;
  /** The depth bound (default WALK_BOUNDS.depth). */
  maxDepth?: number;
  /**
   * Hand over every string whole while any text budget is left (a rewriter replaces whole
   * strings); by default a string that crosses the text bound is handed over cut to what is left.
   */
  whole?: boolean;
}

/**
 * Calls `visit` with every string under `root`, in document order, while the budget lasts; a
 * string that crosses the text bound is handed over cut to what is left. `visit` may return a
 * replacement: the string is replaced in its container, in place (the root, if it is a string
 * itself, comes back replaced). Containers deeper than the depth bound are not entered. Whatever
 * a bound left unread is recorded in `budget.cut` (the first cut only). Never throws on a value
 * parsed from JSON; terminates on any value (circular ones included: the node bound holds).
 */
export function walkStrings(
  root: unknown,
  b: Budget,
  visit: (text: string, path: () => Segment[]) => string | undefined,
  options: WalkOptions = {},
): unknown {
  const base = options.path ?? [];
  const maxDepth = options.maxDepth ?? WALK_BOUNDS.depth;
  const cut = (reason: Cut['reason'], frame: Frame) => {
    b.cut ??= { reason, path: pathOf(frame, base) };
  };
  const top: Frame = { value: root, parent: undefined, key: '', depth: options.depth ?? 1 };
  const stack: Frame[] = [top];
  let out = root;
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (b.nodes <= 0) {
      cut('nodes', frame);
      return out;
    }
    b.nodes--;
    const v = frame.value;
    if (typeof v === 'string') {
      if (v.length === 0) continue;
      if (b.text <= 0) {
        cut('text', frame);
        return out;
      }
      const text = v.length > b.text && !options.whole ? v.slice(0, b.text) : v;
      const over = v.length > b.text;
      b.text -= Math.min(v.length, b.text);
      const replaced = visit(text, () => pathOf(frame, base));
      if (over) cut('text', frame);
      if (typeof replaced === 'string' && replaced !== text) {
        if (frame.parent === undefined) out = replaced;
        else (frame.parent.value as Record<Segment, unknown>)[frame.key] = replaced;
      }
      if (b.cut?.reason === 'text') return out;
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (frame.depth > maxDepth) {
      cut('depth', frame);
      continue;
    }
    // At most as many children as nodes are left (one more, to see that the bound cuts), pushed
    // in reverse so that they pop in document order.
    const room = b.nodes + 1;
    const children: Frame[] = [];
    const depth = frame.depth + 1;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length && children.length < room; i++) children.push({ value: v[i], parent: frame, key: i, depth });
    } else {
      for (const k in v) {
        if (children.length >= room) break;
        if (Object.hasOwn(v, k)) children.push({ value: (v as Record<string, unknown>)[k], parent: frame, key: k, depth });
      }
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return out;
}

/** How deeply a value nests, as far as the bound: its depth, or where it goes past `maxDepth`. */
export interface Nesting {
  /** Levels of objects and arrays: 0 for a primitive, 1 for `{}` or `[1, 2]`; at most maxDepth + 1. */
  depth: number;
  /** Where the value first goes past the bound: the path to a container at level maxDepth + 1. */
  tooDeep?: Segment[];
}

/**
 * The nesting of `value` (see Nesting), read without recursion and without stopping early unless
 * the depth bound is crossed: every container of a value parsed from JSON is looked at once
 * (primitives are skipped, nothing is allocated per value but two stack slots), so the cost is
 * linear in the value, which a body limit bounds; a circular value ends up past the bound. It runs
 * on every message judged: keep it lean.
 */
export function nesting(value: unknown, maxDepth: number = WALK_BOUNDS.depth): Nesting {
  if (typeof value !== 'object' || value === null) return { depth: 0 };
  const values: object[] = [value];
  const depths: number[] = [1];
  let deepest = 0;
  while (values.length > 0) {
    const v = values.pop()!;
    const depth = depths.pop()!;
    if (depth > maxDepth) return { depth, tooDeep: pathPast(value, maxDepth) };
    if (depth > deepest) deepest = depth;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const child: unknown = v[i];
        if (typeof child === 'object' && child !== null) {
          values.push(child);
          depths.push(depth + 1);
        }
      }
    } else {
      for (const k in v) {
        if (!Object.hasOwn(v, k)) continue;
        const child: unknown = (v as Record<string, unknown>)[k];
        if (typeof child === 'object' && child !== null) {
          values.push(child);
          depths.push(depth + 1);
        }
      }
    }
  }
  return { depth: deepest };
}

/** The first path, in document order, to a container at level maxDepth + 1 of a value that has one. */
function pathPast(value: object, maxDepth: number): Segment[] {
  const stack: Frame[] = [{ value, parent: undefined, key: '', depth: 1 }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.depth > maxDepth) return pathOf(frame, []);
    const v = frame.value as Record<string, unknown>;
    const keys: Segment[] = Array.isArray(v) ? v.map((_, i) => i) : Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const child = v[keys[i]!];
      if (typeof child === 'object' && child !== null) stack.push({ value: child, parent: frame, key: keys[i]!, depth: frame.depth + 1 });
    }
  }
  return [];
}

/** Whether a value nests no deeper than the bound. */
export const withinDepth = (value: unknown, maxDepth: number = WALK_BOUNDS.depth): boolean =>
  nesting(value, maxDepth).tooDeep === undefined;

/**
 * A deep copy of a JSON value, without recursion: any depth, shared and circular references kept
 * as they were (like structuredClone, which gives up past ~2,000 levels). Arrays and objects (their
 * own enumerable keys) are copied, primitives taken as they are; a `__proto__` key stays an own
 * property.
 */
export function copyJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  const copies = new Map<object, unknown>();
  const fresh = (v: object): Record<Segment, unknown> => (Array.isArray(v) ? new Array(v.length) : {}) as Record<Segment, unknown>;
  const root = fresh(value);
  copies.set(value, root);
  const stack: Array<[object, Record<Segment, unknown>]> = [[value, root]];
  while (stack.length > 0) {
    const [from, to] = stack.pop()!;
    const set = (key: Segment, child: unknown) => {
      let copy = child;
      if (typeof child === 'object' && child !== null) {
        copy = copies.get(child);
        if (copy === undefined) {
          const made = fresh(child);
          copies.set(child, made);
          stack.push([child, made]);
          copy = made;
        }
      }
      if (key === '__proto__') Object.defineProperty(to, key, { value: copy, writable: true, enumerable: true, configurable: true });
      else to[key] = copy;
    };
    if (Array.isArray(from)) for (let i = 0; i < from.length; i++) set(i, from[i]);
    else for (const k of Object.keys(from)) set(k, (from as Record<string, unknown>)[k]);
  }
  return root as T;
}

/** Longest pointer a finding carries: a path past the depth bound may be 128 keys of any length. */
const MAX_POINTER = 240;

/**
 * The JSON Pointer of `path`, or of its deepest ancestor whose pointer fits in MAX_POINTER
 * characters (an ancestor still names the subtree that holds the place).
 */
export function boundedPointer(path: readonly Segment[]): string {
  let out = '';
  for (const segment of path) {
    const next = out + pointer(segment);
    if (next.length > MAX_POINTER) return out;
    out = next;
  }
  return out;
}
