// stdio's framing (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio):
// messages are delimited by newlines and must not contain embedded newlines, and the server must
// not write anything to its stdout that is not a valid MCP message (its logs go to stderr).
import type { LineRule, LineSubject, Report } from './types.ts';
import { ALL } from './versions.ts';
import { STDIO } from './wires.ts';

const SOURCE = 'https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio';

const lineRule = (r: Pick<LineRule, 'id' | 'summary'> & { check(s: LineSubject): Report[] }): LineRule => ({
  group: 'stdio',
  severity: 'error',
  versions: ALL,
  party: 'server',
  subject: 'line',
  transports: STDIO,
  source: SOURCE,
  ...r,
});

export const STDIO_RULES: readonly LineRule[] = [
  lineRule({
    id: 'stdio-not-a-message',
    summary: 'The server wrote a line to stdout that is not a JSON-RPC message (a log line, a banner, a blank line)',
    check(s): Report[] {
      if (!s.problem) return [];
      return [
        {
          message: `the server wrote a line to stdout that is not an MCP message (${s.problem.problem === 'empty' ? 'a blank line' : s.problem.problem})`,
          pointer: '/stdout',
          evidence: s.problem.excerpt,
          fix: 'write only JSON-RPC messages to stdout, one per line; write logs to stderr',
        },
      ];
    },
  }),
  lineRule({
    id: 'stdio-embedded-newline',
    summary: 'A message on stdout spans several lines (pretty-printed JSON): a newline-delimited reader cannot parse it',
    check(s): Report[] {
      // Several lines that are no message at all are stdio-not-a-message's.
      if (s.lines < 2 || s.problem) return [];
      return [
        {
          message: `the server wrote one message over ${s.lines} lines; stdio messages must not contain embedded newlines`,
          pointer: '/stdout',
          evidence: `${s.lines} lines`,
          fix: 'serialise each message without indentation (JSON.stringify(message), json.dumps(message)) and end it with one \\n',
        },
      ];
    },
  }),
];

/** Rules a rewrite puts right: the message goes out on one line. */
export const STDIO_REWRITABLE: readonly string[] = ['stdio-embedded-newline'];
