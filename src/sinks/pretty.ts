// `--pretty`: the log for a person at a terminal, one line per record. An exchange reads as what
// happened (method, tool, status, outcome, findings, time); a violation as its rule and message, then
// a second, indented line with its fix and the rule's docs link (and a third with the fix in the
// server's framework, when the record has one); any other record as its message and its few plain
// fields. Colours only where the output is a terminal (and NO_COLOR is unset). The JSON
// lines stay the interface for machines: this is a view of them, built from each line as written.
import { Writable } from 'node:stream';
import { ruleDocs } from '../rules/explain.ts';

const LEVELS: Record<number, [label: string, colour: string]> = {
  10: ['TRACE', '\x1b[90m'],
  20: ['DEBUG', '\x1b[90m'],
  30: ['INFO ', '\x1b[32m'],
  40: ['WARN ', '\x1b[33m'],
  50: ['ERROR', '\x1b[31m'],
  60: ['FATAL', '\x1b[35m'],
};
const DIM = '\x1b[2m';
const RESET = '\x1b[0m';
/** Fields every record has, or that the line already shows. */
const SHOWN = new Set(['level', 'time', 'msg', 'name', 'pid', 'hostname']);
/** At most this many other fields on a line, each value cut to VALUE_CHARS: a line stays a line. */
const MAX_FIELDS = 6;
const VALUE_CHARS = 80;

type LogLine = Record<string, unknown>;

const cut = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** A field's value as a short token: strings as they are (cut, line breaks shown as ⏎), the rest as JSON. */
function token(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return cut((text ?? '').replace(/\r?\n/g, '⏎'), VALUE_CHARS);
}

/** What an exchange record says, in the order people read it. */
function exchangeText(r: LogLine): string {
  const parts = [r.method, r.tool, r.status, r.outcome].filter((v) => v !== undefined && v !== null).map(token);
  const findings = typeof r.violations === 'number' && r.violations > 0 ? `${r.violations} finding${r.violations === 1 ? '' : 's'}` : '';
  const time = typeof r.durationMs === 'number' ? `${r.durationMs} ms` : '';
  return [...parts, findings, time].filter(Boolean).join('  ');
}

/** Where a violation's second line starts: under its message, past time and level. */
const FIX_INDENT = ' '.repeat('00:00:00.000 LEVEL '.length + 2);

/** A violation's second line: what to change (the finding's fix, whole) and where its rule is explained. */
export const fixLine = (record: LogLine): string =>
  [`${FIX_INDENT}fix: ${String(record.fix).replace(/\r?\n/g, ' ')}`, ruleDocs(String(record.rule))].filter(Boolean).join('  ');

/** One record as one line (no line break in it); a violation with a fix, as two or three. */
export function prettyLine(record: LogLine, colour: boolean): string {
  const [label, tint] = LEVELS[Number(record.level)] ?? ['     ', ''];
  const time = typeof record.time === 'string' ? record.time.slice(11, 23) : '';
  let text: string;
  if (record.msg === 'exchange') text = `exchange  ${exchangeText(record)}`;
  else if (record.msg === 'violation') {
    text = `violation ${token(record.rule)}  ${token(record.message)}`;
    const lines = [
      typeof record.fix === 'string' ? fixLine(record) : '',
      typeof record.frameworkFix === 'string' ? `${FIX_INDENT}${record.frameworkFix}` : '',
    ];
    for (const line of lines.filter(Boolean)) text += `\n${colour ? `${DIM}${line}${RESET}` : line}`;
  } else {
    const fields = Object.entries(record)
      .filter(([k, v]) => !SHOWN.has(k) && v !== undefined)
      .slice(0, MAX_FIELDS)
      .map(([k, v]) => `${k}=${token(v)}`);
    text = [token(record.msg ?? ''), ...fields].join('  ');
  }
  return colour ? `${DIM}${time}${RESET} ${tint}${label}${RESET} ${text}` : `${time} ${label} ${text}`;
}

/** A stream pino writes its JSON lines to: each comes out on `out` as its pretty line. */
export function prettyStream(out: NodeJS.WritableStream & { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): Writable {
  const colour = out.isTTY === true && env.NO_COLOR === undefined;
  let pending = '';
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      pending += chunk.toString();
      let nl: number;
      let lines = '';
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        try {
          lines += `${prettyLine(JSON.parse(line) as LogLine, colour)}\n`;
        } catch {
          lines += `${line}\n`;
        }
      }
      if (lines) out.write(lines);
      done();
    },
  });
}
