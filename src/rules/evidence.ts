// Building blocks for findings: JSON Pointers, short redacted excerpts, and readers that never throw.

/** A JSON Pointer (RFC 6901) from path segments. */
export function pointer(...segments: Array<string | number>): string {
  return segments.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

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

/** The text of a tools/call result's text content blocks, joined (bounded). */
export function resultText(result: unknown, max = 4096): string {
  const content = asRecord(result)?.content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const block of content) {
    const t = asRecord(block);
    if (t?.type === 'text' && typeof t.text === 'string') text += (text ? '\n' : '') + t.text;
    if (text.length >= max) break;
  }
  return text.slice(0, max);
}
