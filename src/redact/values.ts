// Redacted copies of JSON values, for log records, captures and reports. One bounded, iterative
// walker copies a value and asks a per-value function what each value becomes; no recursion, so
// depth costs a loop, never the call stack. Past the bounds, a whole subtree is replaced by a
// marker: nothing a walk did not read is passed through.
import { READ_BOUNDS } from '../config/defaults.ts';
import { isSecretName, isSecretNumberName } from './names.ts';
import { REDACTED, redactText } from './text.ts';

/** The bounds of one walk: the rules' own, so a redacted copy holds all the rules could read. */
export const REDACT_BOUNDS = READ_BOUNDS;

/** What stands in for a subtree nested deeper than the depth bound. */
export const TOO_DEEP = '[REDACTED: nested too deep]';
/** What stands in for the values after the node bound. */
export const TOO_MANY = '[REDACTED: too many values]';

/** Returned by a per-value function: keep this value (a primitive) or copy it and walk on (a container). */
export const WALK = Symbol('walk');

/** What one value becomes: a replacement, or WALK. `key` is the value's key in its container. */
export type Visit = (value: unknown, key: string | number | undefined) => unknown;

type Container = Record<string | number, unknown>;

/** Sets a key as an own property (`__proto__` too, as JSON.parse makes it). */
function put(into: Container, key: string | number, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(into, key, { value, writable: true, enumerable: true, configurable: true });
  else into[key] = value;
}

/**
 * A copy of `root` with each value as `visit` says, keys in their order. A container past
 * `bounds.depth` levels becomes TOO_DEEP, and every value after `bounds.nodes` TOO_MANY. The
 * root is level 1 when it is a container.
 */
export function mapDeep(root: unknown, visit: Visit, bounds: { depth: number; nodes: number } = REDACT_BOUNDS): unknown {
  const holder: Container = {};
  const stack: Array<[value: unknown, into: Container, key: string | number, depth: number]> = [[root, holder, 'root', 1]];
  let nodes = bounds.nodes;
  while (stack.length > 0) {
    const [value, into, key, depth] = stack.pop()!;
    if (nodes-- <= 0) {
      put(into, key, TOO_MANY);
      continue;
    }
    const mapped = visit(value, into === holder ? undefined : key);
    if (mapped !== WALK) put(into, key, mapped);
    else if (typeof value !== 'object' || value === null) put(into, key, value);
    else if (depth > bounds.depth) put(into, key, TOO_DEEP);
    else if (Array.isArray(value)) {
      const copy: unknown[] = new Array(value.length);
      put(into, key, copy);
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], copy as unknown as Container, i, depth + 1]);
    } else {
      const copy: Container = {};
      put(into, key, copy);
      const keys = Object.keys(value);
      // Every key is set now, so the copy keeps the original order whatever order the stack fills it in.
      for (const k of keys) put(copy, k, undefined);
      for (let i = keys.length - 1; i >= 0; i--) stack.push([(value as Container)[keys[i]!], copy, keys[i]!, depth + 1]);
    }
  }
  return holder.root;
}

/**
 * Whether `key` names a credential and `value` is replaced for it: a string or a container
 * (`credentials: {...}`), a number only under a PIN's or password's name; never null or a
 * boolean (`has_password: true` says whether, not what).
 */
export function secretField(key: string | number | undefined, value: unknown): boolean {
  if (typeof key !== 'string') return false;
  if (typeof value === 'string' || (typeof value === 'object' && value !== null)) return isSecretName(key);
  return typeof value === 'number' && isSecretNumberName(key);
}

/** Credentials out, the rest as it is: values under credential names, and credential-shaped text. */
export const maskVisit: Visit = (value, key) => (secretField(key, value) ? REDACTED : typeof value === 'string' ? redactText(value) : WALK);

/** No text at all: every string (and every value under a credential's name) replaced; shape, numbers and booleans kept. */
export const hideVisit: Visit = (value, key) => (typeof value === 'string' || secretField(key, value) ? REDACTED : WALK);

/** Credential-shaped text out, whatever the keys: for our own records (a report's `pass: 14` is a count). */
export const shapeVisit: Visit = (value) => (typeof value === 'string' ? redactText(value) : WALK);

/** `value` as sent, minus credentials, at any depth (within the bounds). */
export const maskSecrets = <T>(value: T): T => mapDeep(value, maskVisit) as T;

/** `value` with credential-shaped text masked in every string, keys not judged: for a record of our own making. */
export const maskShapes = <T>(value: T): T => mapDeep(value, shapeVisit) as T;

/** `value` with its shape and types but none of its text: a client's values may be any secret. */
export const hideText = (value: unknown): unknown => mapDeep(value, hideVisit);
