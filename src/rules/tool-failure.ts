// A tool that ran and failed, reported as a JSON-RPC error. Every version's tools page keeps two
// ways to fail apart: protocol errors (an unknown tool, invalid arguments, a server error) as
// JSON-RPC errors, and tool execution errors (a missing file, an API that failed, an exception in
// the tool) in the result with isError: true, where the model reads them and can react. Told apart
// by what the error says: its message is a failure statement (failure-statement.ts: "ENOENT: …",
// "TypeError: …", "Failed to …", "Report not found"), on a call to a catalogued tool whose
// arguments pass its schema. Never for the protocol's own codes (-32700, -32600, -32601, -32602,
// the 2026-07-28 rejections), an unknown tool or invalid arguments: their rules judge those. A
// warning: a server may mean a failure of its own (a generic "Internal error" is not read as one).
import { excerpt } from '../redact/excerpt.ts';
import { failureStatement } from './failure-statement.ts';
import { argumentErrors } from './input-validation.ts';
import { errorMessage, integerCode } from './read.ts';
import { callRule, UNRELATED_CODES } from './tool-calls.ts';
import type { ExchangeRule } from './types.ts';
import { ALL } from './versions.ts';

export const toolFailureAsProtocolError: ExchangeRule = callRule(
  'error',
  {
    id: 'tool-failure-as-protocol-error',
    group: 'tools',
    severity: 'warning',
    versions: ALL,
    summary:
      'A tool that ran and failed (its error reads as a failure statement) was reported as a JSON-RPC error instead of an isError result',
    source: 'https://modelcontextprotocol.io/specification/2025-11-25/server/tools#error-handling',
  },
  (s, e) => {
    const code = integerCode(e.code);
    const tool = s.request.tool;
    if (code === undefined || UNRELATED_CODES.has(code) || code === -32601 || code === -32602) return [];
    if (tool === undefined || !s.session.tools.has(tool)) return [];
    // A replay reads the live proxy's verdict on the arguments (the capture keeps no values).
    if ((s.facts ? s.facts.argumentErrors : argumentErrors(s)) !== undefined) return [];
    const statement = failureStatement(errorMessage(e));
    if (!statement) return [];
    return [
      {
        message: `tools/call ${JSON.stringify(tool)} failed while running (${excerpt(statement.line, 120)}) and got JSON-RPC error ${code}: a tool execution error belongs in the result, isError: true, where the model reads it`,
        pointer: '/response/error',
        evidence: excerpt({ code, message: e.message }),
        fix: 'answer with {"content": [{"type": "text", "text": "<what failed and what to try>"}], "isError": true}; keep JSON-RPC errors for requests that failed as requests (unknown tool, invalid params)',
      },
    ];
  },
);
