// JSON text of a value at any depth. JSON.stringify recurses: past a few thousand levels it throws
// "Maximum call stack size exceeded". A message that deep is rare but legal JSON, and the proxy
// must be able to send an edited copy of what it was able to parse, so the serializer falls back
// to an explicit stack when V8's gives up. Same output as JSON.stringify for JSON data.

/** JSON.stringify(value), also for values nested too deeply for it. Throws only where JSON.stringify would for other reasons (a BigInt, a cycle). */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) as string;
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    return iterativeJson(value);
  }
}

type Open =
  | { kind: 'array'; value: unknown[]; next: number; first: boolean }
  | { kind: 'object'; value: Record<string, unknown>; keys: string[]; next: number; first: boolean };

const skipped = (v: unknown): boolean => v === undefined || typeof v === 'function' || typeof v === 'symbol';

/** The value as JSON.stringify would give it, with toJSON applied. */
function resolved(v: unknown, key: string): unknown {
  if (typeof v === 'object' && v !== null && typeof (v as { toJSON?: unknown }).toJSON === 'function')
    return (v as { toJSON(k: string): unknown }).toJSON(key);
  return v;
}

function iterativeJson(root: unknown): string {
  const parts: string[] = [];
  const stack: Open[] = [];
  const inProgress = new Set<object>();
  /** Writes a primitive (toJSON already applied), or opens a container (its members follow). */
  const emit = (v: unknown): void => {
    if (typeof v !== 'object' || v === null) {
      parts.push(skipped(v) ? 'null' : (JSON.stringify(v) ?? 'null'));
      return;
    }
    if (inProgress.has(v)) throw new TypeError('Converting circular structure to JSON');
    inProgress.add(v);
    if (Array.isArray(v)) {
      parts.push('[');
      stack.push({ kind: 'array', value: v, next: 0, first: true });
    } else {
      parts.push('{');
      stack.push({ kind: 'object', value: v as Record<string, unknown>, keys: Object.keys(v), next: 0, first: true });
    }
  };
  // Only a container can be too deep for JSON.stringify: the root is one.
  emit(resolved(root, ''));
  while (stack.length > 0) {
    const open = stack[stack.length - 1]!;
    if (open.kind === 'array') {
      if (open.next >= open.value.length) {
        parts.push(']');
        inProgress.delete(open.value);
        stack.pop();
        continue;
      }
      const i = open.next++;
      if (!open.first) parts.push(',');
      open.first = false;
      emit(resolved(open.value[i], String(i)));
    } else {
      if (open.next >= open.keys.length) {
        parts.push('}');
        inProgress.delete(open.value);
        stack.pop();
        continue;
      }
      const k = open.keys[open.next++]!;
      const v = resolved(open.value[k], k);
      if (skipped(v)) continue;
      if (!open.first) parts.push(',');
      open.first = false;
      parts.push(JSON.stringify(k), ':');
      emit(v);
    }
  }
  return parts.join('');
}
