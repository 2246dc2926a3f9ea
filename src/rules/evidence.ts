// Building blocks for findings: JSON Pointers, short redacted excerpts, and readers that never throw.

/** A JSON Pointer (RFC 6901) from path segments. */
export function pointer(...segments: Array<string | number>): string {
  return segments.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/** One segment of a JSON Pointer, unescaped. */
export const unescapeSegment = (segment: string): string => segment.replace(/~1/g, '/').replace(/~0/g, '~');

const SECRETS: RegExp[] = [
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi,
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g, // JWT
  /\b(sk|pk|rk|ghp|gho|ghs|xox[abp])[-_][A-Za-z0-9_-]{10,}/g, // API keys of common services
  /\b(password|passwd|secret|token|api[_-]?key|access[_-]?token)(["']?\s*[:=]\s*["']?)[^\s"'&,;}]+/gi,
];

/** Masks anything that looks like a credential. */
export function redactSecrets(text: string): string {
  let out = text;
  for (const re of SECRETS) {
    out = out.replace(re, (match, a: string, b: string) =>
      typeof a === 'string' && typeof b === 'string' && /[:=]/.test(b) ? `${a}${b}[REDACTED]` : /^(Bearer|Basic)\s/i.test(match) ? `${a} [REDACTED]` : '[REDACTED]',
    );
  }
  return out;
}

/** Every string in `value` replaced: a client's values (tool arguments above all) may be any secret. */
function withoutText(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return '[REDACTED]';
  if (depth > 16 || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((v) => withoutText(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutText(v, depth + 1)]));
}

/**
 * A client's request as evidence: its shape (method, id, keys, types), with the values of
 * `params.arguments` and every other string in params hidden, so no secret reaches a log line.
 */
export function requestExcerpt(message: unknown, max = 160): string {
  const m = asRecordLoose(message);
  if (!m) return excerpt(withoutText(message), max);
  const { params, ...rest } = m;
  return excerpt(params === undefined ? rest : { ...rest, params: withoutText(params) }, max);
}

const asRecordLoose = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/** A short, one-line, redacted excerpt of any value, for the evidence field. */
export function excerpt(value: unknown, max = 160): string {
  let text: string;
  if (typeof value === 'string') text = value;
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  const oneLine = redactSecrets(text).replace(/\s+/g, ' ').trim();
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}

export const asRecord = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/** Where a content block's text starts in the joined text of `textBlocks`. */
export interface BlockStart {
  /** Index of the block in `content`. */
  index: number;
  /** Offset of its text in the joined text. */
  at: number;
}

/** The text of a tools/call result's text content blocks, joined by newlines (bounded), with where each starts. */
export function textBlocks(result: unknown, max = 4096): { text: string; starts: BlockStart[] } {
  const content = asRecord(result)?.content;
  const starts: BlockStart[] = [];
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

/** The text of a tools/call result's text content blocks, joined (bounded). */
export const resultText = (result: unknown, max = 4096): string => textBlocks(result, max).text;
