// fast-check generators shared by the property tests (test/unit/*.property.test.ts), and the one
// knob that scales them: PROPERTY_RUNS_MULTIPLIER (default 1) multiplies every numRuns, so
//   PROPERTY_RUNS_MULTIPLIER=20 node --import tsx --test --test-concurrency=1 test/unit/*.property.test.ts
// is the longer run. PROPERTY_SEED=<n> replays a run with the seed fast-check printed.
import fc from 'fast-check';
import type { JsonRpcId } from '../../src/codec/jsonrpc.ts';

function positiveNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got ${JSON.stringify(raw)}`);
  return n;
}

export const RUNS_MULTIPLIER = positiveNumber('PROPERTY_RUNS_MULTIPLIER', 1);
const SEED = process.env.PROPERTY_SEED === undefined || process.env.PROPERTY_SEED === '' ? undefined : Number(process.env.PROPERTY_SEED);

/** fast-check parameters for a property of `base` runs in the normal test run (scaled by PROPERTY_RUNS_MULTIPLIER). */
export function runs<T>(base: number): fc.Parameters<T> {
  const numRuns = Math.max(1, Math.round(base * RUNS_MULTIPLIER));
  // includeErrorInReport: the assertion's message is part of the report node:test prints.
  return SEED === undefined ? { numRuns, includeErrorInReport: true } : { numRuns, includeErrorInReport: true, seed: SEED };
}

// ---------------------------------------------------------------------------------------------
// Text

/** One code point of any plane (astral included, no lone surrogates), or a character that matters to the codecs. */
const anyChar = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(':', ' ', '\0', '\t', '\uFEFF', 'é', '€', '😀', '\u{10FFFF}', '\u2028', '\u00A0', '{', '"', '\\', '<'),
  },
);

/** Any unicode text of up to `maxLength` code points. */
export const unicodeText = (maxLength = 24): fc.Arbitrary<string> => fc.string({ unit: anyChar, maxLength });

const withoutEol = (s: string): string => s.replace(/[\r\n]/g, '');

// ---------------------------------------------------------------------------------------------
// SSE streams

export const SSE_TERMINATORS = ['\n', '\r\n', '\r'] as const;
const terminator = fc.constantFrom(...SSE_TERMINATORS);

/** A field value: any unicode, no line breaks. */
const fieldValue = unicodeText(16).map(withoutEol);
/** A field name no field of the spec has (it may hold anything but ':' and line breaks). */
const otherField = unicodeText(8).map((s) => withoutEol(s).replaceAll(':', ''));

/**
 * One SSE line (no terminator): data/event/id/retry with every separator style, comments, fields
 * without a colon, unknown fields, retry values valid and not.
 */
const sseLine: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .tuple(fc.constantFrom('data', 'event', 'id', 'retry'), fc.constantFrom(':', ': ', ':  '), fieldValue)
      .map(([f, sep, v]) => `${f}${sep}${v}`),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(fc.constantFrom('data', 'id'), fc.constantFrom(':', ': '), fc.json()).map(([f, sep, v]) => `${f}${sep}${v}`),
  },
  { weight: 1, arbitrary: fc.oneof(fc.nat(), fc.nat({ max: 99 })).map((n) => `retry: ${n}`) },
  { weight: 2, arbitrary: fieldValue.map((v) => `:${v}`) },
  { weight: 1, arbitrary: fc.constantFrom('data', 'id', 'event', 'retry', ':', 'data:', 'id:', 'id: \0', 'event:') },
  { weight: 1, arbitrary: fc.tuple(otherField, fc.constantFrom('', ':', ': '), fieldValue).map(([f, sep, v]) => `${f}${sep}${v}`) },
);

export interface SseStreamOptions {
  /** Allow lines that start with U+FEFF or "ï»¿" (a BOM anywhere but at the stream's start is content). */
  strayBom?: boolean;
}

/** A line and the terminator that ends it. */
const terminated = (line: fc.Arbitrary<string>) => fc.tuple(line, terminator).map(([l, t]) => l + t);

/**
 * A text/event-stream as text: an optional BOM (or two), events made of lines ended by any mix
 * of LF, CRLF and CR and closed by a blank line, extra blank lines between events, and an optional
 * unterminated tail (lines without their blank line, the last one perhaps without its terminator).
 * Without `strayBom`, no line starts with U+FEFF (the only BOM is the stream's).
 */
export function sseText(options: SseStreamOptions = {}): fc.Arbitrary<string> {
  const line = options.strayBom
    ? fc.oneof(
        { weight: 4, arbitrary: sseLine },
        { weight: 1, arbitrary: fc.tuple(fc.constantFrom('\uFEFF', '\u00EF\u00BB\u00BF'), sseLine).map(([bom, l]) => bom + l) },
      )
    : sseLine.map((l) => l.replace(/^\uFEFF+/, ''));
  const event = fc
    .tuple(fc.array(terminated(line), { maxLength: 5 }), terminator, fc.array(terminator, { maxLength: 2 }))
    .map(([lines, end, blanks]) => lines.join('') + end + blanks.join(''));
  const tail = fc
    .tuple(fc.array(terminated(line), { maxLength: 2 }), fc.option(line, { nil: '' }))
    .map(([lines, last]) => lines.join('') + last);
  return fc
    .tuple(
      fc.constantFrom('', '', '', '\uFEFF', '\uFEFF', '\uFEFF\uFEFF'),
      fc.array(event, { maxLength: 6 }),
      fc.oneof({ weight: 2, arbitrary: fc.constant('') }, { weight: 1, arbitrary: tail }),
    )
    .map(([bom, events, rest]) => bom + events.join('') + rest);
}

/**
 * An SSE stream as bytes: the UTF-8 of sseText, sometimes with stray bytes put in (invalid UTF-8,
 * lone CRs and LFs, pieces of a BOM) or a partial BOM in front.
 */
export function sseBytes(options: SseStreamOptions = {}): fc.Arbitrary<Buffer> {
  const stray = fc.tuple(fc.nat(), fc.constantFrom(0xff, 0xc3, 0xef, 0xbb, 0xbf, 0xe2, 0x82, 0xf0, 0x9f, 0x0d, 0x0a, 0x00));
  return fc
    .tuple(
      sseText(options),
      fc.constantFrom([], [], [], [0xef], [0xef, 0xbb], [0xbb, 0xbf]),
      fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(stray, { maxLength: 4 }) }),
    )
    .map(([text, prefix, inserts]) => {
      const bytes = [...prefix, ...Buffer.from(text, 'utf8')];
      for (const [at, byte] of inserts) bytes.splice(at % (bytes.length + 1), 0, byte);
      return Buffer.from(bytes);
    });
}

/** How to cut a stream into chunks: where, as a function of the stream's bytes. */
export type CutPlan = (bytes: Buffer) => number[];

/**
 * Cut points for a stream: random positions (repeats give empty chunks), every byte, after every
 * CR (between CR and LF), inside every multibyte character, or random positions plus those.
 */
export const cutPlan: fc.Arbitrary<CutPlan> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.array(fc.nat(), { maxLength: 12 }).map(
      (ps): CutPlan =>
        (b) =>
          ps.map((p) => p % (b.length + 1)),
    ),
  },
  { weight: 1, arbitrary: fc.constant<CutPlan>((b) => Array.from({ length: b.length + 1 }, (_, i) => i)) },
  { weight: 1, arbitrary: fc.constant<CutPlan>((b) => positions(b, (x) => x === 0x0d).map((i) => i + 1)) },
  { weight: 1, arbitrary: fc.constant<CutPlan>((b) => positions(b, (x) => x >= 0x80 && x < 0xc0)) },
  {
    weight: 2,
    arbitrary: fc.array(fc.nat(), { maxLength: 6 }).map(
      (ps): CutPlan =>
        (b) => [
          ...ps.map((p) => p % (b.length + 1)),
          ...positions(b, (x) => x === 0x0d).map((i) => i + 1),
          ...positions(b, (x) => x >= 0x80 && x < 0xc0),
        ],
    ),
  },
);

function positions(b: Buffer, pick: (byte: number) => boolean): number[] {
  const out: number[] = [];
  for (let i = 0; i < b.length; i++) if (pick(b[i]!)) out.push(i);
  return out;
}

/** `bytes` cut at `points` (any order, repeats allowed: they give empty chunks). */
export function cutAt(bytes: Buffer, points: readonly number[]): Buffer[] {
  const edges = [0, ...[...points].sort((a, b) => a - b), bytes.length];
  return edges.slice(1).map((end, k) => bytes.subarray(edges[k], end));
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC near misses

/** Ids JSON-RPC allows, and values that are almost ids (JS-only ones included: NaN, Infinity, undefined). */
export const idLike: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.constantFrom(0, -0, 1, '1', '', 1.5, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2),
  fc.string({ maxLength: 6 }),
  fc.double(),
  fc.constantFrom(null, true, false, NaN, Infinity, -Infinity, undefined),
  fc.constantFrom({}, [], [1], { id: 1 }),
);

/** JSON values only (what JSON.parse can give). */
export const jsonIdLike: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.constantFrom(0, 1, '1', '', 1.5, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2),
  fc.string({ maxLength: 6 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(null, true, false),
  fc.constantFrom({}, [], [1], { id: 1 }),
);

const small = fc.jsonValue({ maxDepth: 2 });

type Key = 'jsonrpc' | 'id' | 'method' | 'params' | 'result' | 'error';
const KEYS: readonly Key[] = ['jsonrpc', 'id', 'method', 'params', 'result', 'error'];

/**
 * Objects shaped almost like JSON-RPC messages: a well-formed request, notification, result or
 * error (any id JSON-RPC allows, error id null or absent), then none, one or two changes: a member
 * dropped, or one of jsonrpc, id, method, params, result, error set to a right or nearly right
 * value. `json`: JSON values only (no NaN, Infinity, undefined).
 */
export function nearMissMessage(json = false): fc.Arbitrary<Record<string, unknown>> {
  const id = json ? jsonIdLike : idLike;
  const goodId = fc.oneof(fc.integer(), fc.string({ maxLength: 6 }), fc.double({ noNaN: true, noDefaultInfinity: true }));
  const method = fc.oneof(fc.constantFrom('tools/call', 'initialize', 'notifications/progress', ''), fc.string({ maxLength: 8 }));
  const params = fc.oneof(fc.dictionary(fc.string({ maxLength: 4 }), small, { maxKeys: 3, noNullPrototype: true }), small);
  const errorObject = fc.record(
    { code: fc.oneof(fc.integer({ min: -32768, max: -32000 }), id), message: fc.oneof(fc.string(), small), data: small },
    { requiredKeys: [] },
  );
  const near: Record<Key, fc.Arbitrary<unknown>> = {
    jsonrpc: fc.constantFrom<unknown>('2.0', '2', '1.0', 2, null, '2.0 ', ...(json ? [] : [undefined])),
    id,
    method: fc.oneof(method, fc.constantFrom<unknown>(1, null, {}, [], true)),
    params,
    result: small,
    error: fc.oneof({ weight: 3, arbitrary: errorObject }, { weight: 1, arbitrary: small }),
  };
  const v = fc.constant('2.0' as const);
  const template = fc.oneof(
    fc.record({ jsonrpc: v, id: goodId, method, params }, { requiredKeys: ['jsonrpc', 'id', 'method'] }),
    fc.record({ jsonrpc: v, method, params }, { requiredKeys: ['jsonrpc', 'method'] }),
    fc.record({ jsonrpc: v, id: goodId, result: small }),
    fc.record({ jsonrpc: v, id: fc.oneof(goodId, fc.constant(null)), error: errorObject }, { requiredKeys: ['jsonrpc', 'error'] }),
  );
  const change = fc.oneof(
    fc.constantFrom(...KEYS).map((key) => ({ key, drop: true as const })),
    fc.constantFrom(...KEYS).chain((key) => near[key].map((value) => ({ key, drop: false as const, value }))),
  );
  return fc
    .tuple(
      template,
      fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, { weight: 3, arbitrary: fc.array(change, { minLength: 1, maxLength: 2 }) }),
    )
    .map(([t, changes]) => {
      const out: Record<string, unknown> = { ...t };
      for (const c of changes) {
        if (c.drop) delete out[c.key];
        else out[c.key] = c.value;
      }
      return out;
    });
}

// ---------------------------------------------------------------------------------------------
// Leaky and failure-looking text

const lower = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz'), minLength: 1, maxLength: 8 });
const ident = fc.string({
  unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_'),
  minLength: 1,
  maxLength: 10,
});
const klass = fc.tuple(fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ'), ident).map(([a, b]) => a + b);
const line = fc.integer({ min: 1, max: 99999 });
const octet = fc.integer({ min: 0, max: 255 });
const port = fc.integer({ min: 1, max: 65535 });
const segs = fc.array(lower, { minLength: 1, maxLength: 3 }).map((s) => s.join('/'));
const root = fc.constantFrom('home', 'Users', 'usr', 'var', 'srv', 'opt', 'etc', 'app', 'tmp', 'root', 'workspace', 'code');

/** One leaked internal, of every kind the leak rules know: stack frames, paths, private addresses, internal hosts. */
export const leak: fc.Arbitrary<string> = fc.oneof(
  // Stack traces.
  fc
    .tuple(ident, root, segs, fc.constantFrom('js', 'ts', 'mjs', 'cjs', 'tsx'), line, line)
    .map(([fn, r, p, ext, l, c]) => `    at ${fn} (/${r}/${p}.${ext}:${l}:${c})`),
  fc.tuple(ident, line, line).map(([fn, l, c]) => `at async ${fn} (node:internal/process/task_queues:${l}:${c})`),
  fc.tuple(segs, line, ident).map(([p, l, fn]) => `  File "/usr/lib/python3.11/${p}.py", line ${l}, in ${fn}`),
  fc.constant('Traceback (most recent call last):'),
  fc.tuple(lower, klass, ident, line).map(([pkg, k, fn, l]) => `\tat com.${pkg}.${k}.${fn}(${k}.java:${l})`),
  fc.tuple(klass, lower).map(([k, pkg]) => `Exception in thread "main" java.lang.${k}Exception\nCaused by: java.io.${k}Exception: ${pkg}`),
  fc.tuple(segs, line).map(([p, l]) => `goroutine 1 [running]:\nmain.main()\n\t/home/dev/${p}/main.go:${l} +0x1d`),
  fc.constant('panic: runtime error: index out of range [3] with length 2'),
  fc
    .tuple(klass, ident, line)
    .map(([k, fn, l]) => `   at Acme.${k}.${fn}() in C:\\src\\${k}.cs:line ${l}\nSystem.InvalidOperationException: --- End of stack trace`),
  fc.tuple(segs, line, ident).map(([p, l, fn]) => `/app/${p}.rb:${l}:in \`${fn}'`),
  fc.tuple(segs, line, ident).map(([p, l, fn]) => `#0 /var/www/${p}.php(${l}): ${fn}()\n#1 {main}`),
  fc.tuple(line, line).map(([l, c]) => `thread 'main' panicked at src/main.rs:${l}:${c}`),
  // Paths.
  fc.tuple(root, segs).map(([r, p]) => `/${r}/${p}`),
  fc.tuple(segs, fc.constantFrom('py', 'go', 'rs', 'java')).map(([p, e]) => `/x/${p}.${e}:12`),
  fc.tuple(lower, lower).map(([a, b]) => `C:\\Users\\${a}\\${b}.txt`),
  fc.tuple(lower, lower).map(([a, b]) => `\\\\${a}\\share\\${b}`),
  // Private addresses.
  fc.tuple(octet, octet, octet, fc.option(port)).map(([a, b, c, p]) => `10.${a}.${b}.${c}${p === null ? '' : `:${p}`}`),
  fc.tuple(octet, octet).map(([a, b]) => `192.168.${a}.${b}`),
  fc.tuple(fc.integer({ min: 16, max: 31 }), octet, octet).map(([a, b, c]) => `172.${a}.${b}.${c}`),
  fc.tuple(octet, octet).map(([a, b]) => `169.254.${a}.${b}`),
  fc.tuple(fc.integer({ min: 64, max: 127 }), octet, octet).map(([a, b, c]) => `100.${a}.${b}.${c}`),
  fc.constantFrom('127.0.0.1', '::1', 'fe80::1%eth0', 'fd12:3456:789a::1'),
  // Internal hosts and connection strings.
  fc
    .tuple(lower, fc.constantFrom('internal', 'local', 'corp', 'lan', 'localdomain', 'intranet', 'home.arpa'), fc.option(port))
    .map(([h, d, p]) => `${h}.${d}${p === null ? '' : `:${p}`}`),
  port.map((p) => `localhost:${p}`),
  fc
    .tuple(fc.constantFrom('postgres', 'mysql', 'mongodb+srv', 'redis', 'amqp'), lower, lower)
    .map(([s, u, h]) => `${s}://${u}:secret@${h}:5432/db`),
  fc.tuple(lower).map(([h]) => `jdbc:mysql://${h}:3306/app`),
  fc.tuple(lower).map(([h]) => `Server=${h};Database=app;User ID=sa;Password=pw`),
);

/** Text that looks like a leak and is not one (versions, public names, file URIs, ordinary words). */
const nearLeak = fc.constantFrom(
  'v10.0.0.1',
  'version 10.0.0.1',
  '10.0.0.256',
  'file:///home/u/notes.txt',
  'db.internal.example.com',
  'meet at noon',
  '1.2.3.4',
  '/relative/path',
  'C:',
  'at x (y)',
);

/** Text that reads as a failure to the silent-success heuristics. */
export const failureText = fc.constantFrom(
  'Error: something broke',
  "TypeError: Cannot read properties of undefined (reading 'x')",
  'Failed to fetch',
  'Upload failed.',
  'connect ECONNREFUSED 127.0.0.1:5432',
  'File not found',
  'Invalid input: name',
  'Permission denied',
  'Cannot read properties of undefined',
  '500 Internal Server Error',
  'Unknown tool: nope',
  'Tool "x" not found',
  'no such tool',
  'Exception - oops',
);

const fragment = fc.oneof(
  { weight: 3, arbitrary: unicodeText(20) },
  { weight: 2, arbitrary: fc.lorem({ maxCount: 4 }) },
  { weight: 3, arbitrary: leak },
  { weight: 1, arbitrary: nearLeak },
  { weight: 2, arbitrary: failureText },
);
const separator = fc.constantFrom(' ', '\n', '\r\n', '\r', ': ', '\t', '', '; ', '"', '(', ') ', '\n    ');

/** Random text with leaks, near misses and failure words mixed in, joined by any separators. */
export const leakyText: fc.Arbitrary<string> = fc
  .array(fc.tuple(fragment, separator), { maxLength: 6 })
  .map((parts) => parts.map(([f, s]) => f + s).join(''));

// ---------------------------------------------------------------------------------------------
// Request ids

/** The id of a client request: what MCP allows (a string or an integer). */
export const requestId: fc.Arbitrary<JsonRpcId> = fc.oneof(
  fc.integer({ min: -1_000_000, max: 1_000_000_000 }),
  fc.constantFrom(0, 1, 7, Number.MAX_SAFE_INTEGER, '1', '7', ''),
  fc.string({ maxLength: 10 }),
  fc.uuid(),
);
