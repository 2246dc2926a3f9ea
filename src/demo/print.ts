// How the demo prints: colours (or none), a clipped line, a response in a few words.
import { asRecord } from '../codec/json-value.ts';
import type { JsonObject } from './client.ts';

/** A record of the proxy's log, as the demo reads it back. */
export type LogRecord = Record<string, unknown>;

export type Style = 'bold' | 'dim' | 'green' | 'yellow' | 'red';
export type Paint = (style: Style, text: string) => string;

const SGR: Record<Style, [number, number]> = { bold: [1, 22], dim: [2, 22], green: [32, 39], yellow: [33, 39], red: [31, 39] };

export const painter =
  (color: boolean): Paint =>
  (style, text) =>
    color ? `\x1b[${SGR[style][0]}m${text}\x1b[${SGR[style][1]}m` : text;

export const clip = (s: string, max: number): string => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

/** A response in a few words: `error -32602 "Unknown tool: x"`, `result, 3 tools`. */
export function describeResponse(m: JsonObject): string {
  const error = asRecord(m.error);
  if (error) {
    const [first = '', ...more] = String(error.message).split('\n');
    return `error ${String(error.code)} "${clip(first, 40)}"${more.length > 0 ? ` + ${more.length} more lines` : ''}`;
  }
  const result = asRecord(m.result) ?? {};
  if (Array.isArray(result.tools)) return `result, ${result.tools.length} tools`;
  if (typeof result.protocolVersion === 'string') return `result, protocolVersion ${result.protocolVersion}`;
  const first = Array.isArray(result.content) ? asRecord(result.content[0]) : undefined;
  const text = typeof first?.text === 'string' ? ` "${clip(first.text, 40)}"` : '';
  return `result${result.isError === true ? ' isError' : ''}${text}`;
}
