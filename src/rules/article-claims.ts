// The article the project was created from ("MCP 错误码详解", ../shared/seeds/ in the project's
// steering repository), claim by claim: what each checkable claim says, the rules that judge it,
// and a test that shows them firing. docs/rules.md ("The article, claim by claim") is rendered
// from this table and a test keeps both equal, checks that every rule named exists and every test
// named is there, and that a claim judged only in part, or not at all, says why.

export interface ArticleClaim {
  /** S1..S46, as ../shared/spec/seed-coverage.md numbers them. */
  id: string;
  /** The claim, in short. */
  claim: string;
  /** The rules that judge it (ids of `mcp-warden rules`). */
  rules: readonly string[];
  /** Test files (under test/) that show the rules firing and staying silent, each with a text its cases contain. */
  tests: ReadonlyArray<{ file: string; shows: string }>;
  /** Why the claim is judged only in part, or not at all (absent: judged in full). */
  gap?: string;
}

const CODES = 'integration/rules-codes.test.ts';
const TOOLS = 'integration/rules-tools.test.ts';
const PROTOCOL = 'integration/rules-protocol.test.ts';
const MODERN = 'integration/rules-protocol-modern.test.ts';
const REFUSALS = 'integration/rules-refusals.test.ts';

export const ARTICLE_CLAIMS: readonly ArticleClaim[] = [
  {
    id: 'S1',
    claim: 'A protocol error has no result, only an error with an integer code and a message',
    rules: ['error-shape', 'jsonrpc-envelope'],
    tests: [{ file: CODES, shows: 'code is a string' }],
  },
  {
    id: 'S2',
    claim: 'A tool execution error is a successful JSON-RPC response whose result has isError: true',
    rules: ['iserror-not-boolean', 'tool-result-shape'],
    tests: [{ file: TOOLS, shows: 'isError as a string' }],
  },
  {
    id: 'S3',
    claim: 'resultType is new in 2026-07-28; a missing one is read as "complete"',
    rules: ['result-type-missing', 'result-type-unknown', 'result-type-legacy'],
    tests: [{ file: MODERN, shows: 'result-type-missing fires on a result without resultType' }],
  },
  {
    id: 'S4',
    claim: 'An unknown tool is JSON-RPC error -32602 (2025-06-18, 2025-11-25, 2026-07-28)',
    rules: ['unknown-tool-wrong-code'],
    tests: [{ file: TOOLS, shows: 'unknown tool answered with -32601' }],
  },
  {
    id: 'S5',
    claim: 'An unknown tool is not answered with an isError result',
    rules: ['unknown-tool-as-iserror'],
    tests: [{ file: TOOLS, shows: 'unknown tool answered with isError' }],
  },
  {
    id: 'S6',
    claim: 'An unknown tool is not answered with a result without isError',
    rules: ['unknown-tool-as-result'],
    tests: [{ file: TOOLS, shows: 'unknown tool answered with a plain result' }],
    gap: 'judged when the session saw a complete tools/list: a plain result says nothing of the tool, and the proxy asks the server nothing of its own (a client that caches the catalogue leaves the proxy without it; `mcp-warden check` probes it)',
  },
  {
    id: 'S7',
    claim: 'An unknown tool is not answered with an HTML page or an empty body',
    rules: ['unknown-tool-unanswered', 'html-body', 'empty-body'],
    tests: [
      { file: 'integration/rules-bodies.test.ts', shows: 'all stay silent on a good answer' },
      { file: 'integration/rules-error-pages.test.ts', shows: 'unknown-tool-unanswered fires with html-body' },
    ],
  },
  {
    id: 'S8',
    claim: 'Unknown tool: -32602, not -32601, and the "-32601 with 404" pairing does not apply to it',
    rules: ['unknown-tool-wrong-code', 'unknown-method-status'],
    tests: [
      { file: CODES, shows: 'an unknown tool answered -32601 (the code is wrong; no 404 to add)' },
      { file: 'integration/enforce-modern.test.ts', shows: 'no 404 is added' },
    ],
  },
  {
    id: 'S9',
    claim: 'Protocol errors are for requests that do not fit CallToolRequest, such as a call without a name',
    rules: ['malformed-call-as-result'],
    tests: [{ file: REFUSALS, shows: 'a tools/call naming no tool answered with an isError result' }],
  },
  {
    id: 'S10',
    claim: 'A failed API call or business-logic error is isError; an internal server error is a protocol error (-32603)',
    rules: ['tool-failure-as-protocol-error'],
    tests: [{ file: TOOLS, shows: 'a tool failure (ENOENT) reported as JSON-RPC -32603' }],
    gap: 'the wire does not show which kind of failure a server met: a JSON-RPC error whose text states a failure of the tool (ENOENT, a TypeError, "X not found") is flagged (a warning), a bare "Internal error" cannot be told from the server failing',
  },
  {
    id: 'S11',
    claim: 'Input validation errors (a bad date format, a value out of range) are tool execution errors (2025-11-25+)',
    rules: ['input-validation-as-protocol-error'],
    tests: [
      { file: TOOLS, shows: 'schema-invalid arguments answered with -32602' },
      { file: TOOLS, shows: 'a date that is no date (format: date) answered with -32602' },
    ],
    gap: 'judged where the arguments provably fail the tool\'s inputSchema (with its date, time, email, uri, uuid and address formats): a semantic failure ("must be in the future") is not visible on the wire',
  },
  {
    id: 'S12',
    claim: '2025-06-18 does not say where the boundary lies',
    rules: ['input-validation-as-protocol-error'],
    tests: [{ file: TOOLS, shows: 'the same before 2025-11-25 (ambiguous then)' }],
  },
  {
    id: 'S13',
    claim: 'The 2026-07-28 schema still lists "invalid tool arguments" among the uses of -32602',
    rules: ['input-validation-as-protocol-error'],
    tests: [{ file: TOOLS, shows: 'schema\\.ts' }],
  },
  {
    id: 'S14',
    claim: 'A problem the model cannot fix (an unknown tool, a broken server) is not an isError result',
    rules: ['unknown-tool-as-iserror'],
    tests: [{ file: TOOLS, shows: 'no catalogue: isError says the tool is unknown' }],
    gap: 'the unknown-tool half is judged; whether an isError text reports a broken server rather than bad arguments is not visible on the wire',
  },
  {
    id: 'S15',
    claim: 'The five standard JSON-RPC codes apply in every version',
    rules: ['reserved-code', 'legacy-range-code'],
    tests: [{ file: CODES, shows: 'unknown tool -32602' }],
  },
  {
    id: 'S16',
    claim: '-32700: the body is not valid JSON',
    rules: ['parse-error-code', 'parse-error-unanswered', 'malformed-unanswered'],
    tests: [
      { file: PROTOCOL, shows: 'parse-error-code fires on an empty body answered -32600' },
      { file: 'integration/stdio.test.ts', shows: 'a line that is no request answered -32603' },
    ],
    gap: "parse-error-code judges the answer on every transport (on stdio and legacy SSE: the first id-null error on the session's stream); parse-error-unanswered judges an HTTP POST's own reply, malformed-unanswered a stream left without an answer; answers on 401/403/404/405/406/413/415/429 are rejections before parsing",
  },
  {
    id: 'S17',
    claim: 'When the id cannot be read, the error carries id null (or none)',
    rules: ['parse-error-id', 'error-id-null'],
    tests: [{ file: CODES, shows: 'id null on HTTP 200' }],
    gap: 'a made-up id on a parse error is judged on HTTP POSTs: on a stream (stdio, legacy SSE) an answer with another id answers something else, so it cannot be told from one',
  },
  {
    id: 'S18',
    claim: '-32600: jsonrpc or method missing, or of the wrong type',
    rules: ['invalid-request-code'],
    tests: [{ file: 'integration/rules-invalid-request.test.ts', shows: '-32600 is the right answer: silent' }],
    gap: 'a body without method may be a malformed response, and a batch entry is judged with its batch; judged on every transport otherwise',
  },
  {
    id: 'S19',
    claim: '-32601: the method does not exist',
    rules: ['unknown-method-wrong-code', 'unknown-method-generic-error', 'removed-method'],
    tests: [
      { file: CODES, shows: 'custom method "not implemented", -32603' },
      { file: CODES, shows: 'no/such_method answered with a bare -32603 "Internal error"' },
    ],
    gap: 'a method outside the version\'s list may be an extension the server serves: a wrong code is flagged when the error says the method is unknown (an error) or says nothing at all (-32600, a bare "Internal error": a warning), never when it names a failure of its own; a result is never flagged',
  },
  {
    id: 'S20',
    claim: '-32601 also covers a capability the server did not declare (prompts/list without prompts)',
    rules: ['unknown-method-wrong-code'],
    tests: [{ file: CODES, shows: 'prompts/list without prompts capability, -32602' }],
  },
  {
    id: 'S21',
    claim: '-32602: a prompt name that does not exist',
    rules: ['invalid-params-code'],
    tests: [{ file: CODES, shows: 'prompts/get of an unknown prompt answered -32603 "Prompt not found"' }],
    gap: "judged when the server's error says the prompt is unknown: a plain -32603 for a prompt the proxy saw in no prompts/list is not flagged (the prompt catalogue is not kept)",
  },
  {
    id: 'S22',
    claim: '-32602: an invalid or expired pagination cursor',
    rules: ['invalid-params-code'],
    tests: [{ file: REFUSALS, shows: 'a cursor the server cannot read, -32603' }],
    gap: 'judged when the error names the cursor: whether a cursor is valid needs the pages before it',
  },
  {
    id: 'S23',
    claim: '-32602: an invalid log level',
    rules: ['invalid-params-code'],
    tests: [{ file: CODES, shows: 'logging/setLevel "verbose" answered -32603' }],
  },
  {
    id: 'S24',
    claim: 'From 2026-07-28, a missing resource is -32602 too',
    rules: ['resource-not-found-code'],
    tests: [{ file: CODES, shows: 'resources/read -32002' }],
  },
  {
    id: 'S25',
    claim: '2026-07-28: a method not implemented is HTTP 404 with -32601',
    rules: ['unknown-method-status'],
    tests: [
      { file: CODES, shows: 'custom method -32601 on HTTP 200' },
      { file: CODES, shows: 'custom method -32601 in an SSE stream' },
    ],
  },
  {
    id: 'S26',
    claim: 'A request missing the required _meta is HTTP 400 with -32602',
    rules: ['missing-meta-served', 'error-status-pairing', 'missing-request-meta'],
    tests: [
      { file: REFUSALS, shows: 'a 2026-07-28 request without _meta served anyway' },
      { file: CODES, shows: 'missing _meta, -32602 on HTTP 200' },
    ],
  },
  {
    id: 'S27',
    claim: 'Before 2026-07-28 no HTTP status is set for JSON-RPC errors, and 404 means the session expired',
    rules: ['method-not-found-on-404', 'unknown-method-status'],
    tests: [
      { file: CODES, shows: 'a 2025-11-25 -32601 on HTTP 404 (reads as an expired session)' },
      { file: CODES, shows: 'custom method -32601 on HTTP 200' },
    ],
  },
  {
    id: 'S28',
    claim: '-32000..-32019 is a legacy range new implementations should not use (-32002 excepted)',
    rules: ['legacy-range-code'],
    tests: [{ file: CODES, shows: '-32000 from a handler' }],
  },
  {
    id: 'S29',
    claim: '-32020..-32099 belong to the spec: undefined codes are not sent, defined ones only with their meaning',
    rules: ['reserved-code', 'error-data-required', 'error-status-pairing'],
    tests: [{ file: CODES, shows: '-32050 (spec-owned, undefined)' }],
    gap: "undefined codes are judged; a defined code's meaning is judged through its data and status (S30-S32), not through when the server chose it",
  },
  {
    id: 'S30',
    claim: '-32020 HeaderMismatch: headers missing, malformed or disagreeing with the body, on HTTP 400',
    rules: ['header-mismatch', 'error-status-pairing'],
    tests: [
      { file: MODERN, shows: 'header-mismatch fires on another Mcp-Method' },
      { file: CODES, shows: '-32020 on HTTP 200' },
    ],
    gap: "the client's mismatch and the status of a -32020 are judged; whether a server that got mismatched headers refused the request needs the headers as the server saw them, which enforce's header-mismatch rewrite changes (`mcp-warden check` probes it)",
  },
  {
    id: 'S31',
    claim: '-32021 lists the missing capabilities in data.requiredCapabilities, on HTTP 400',
    rules: ['error-data-required', 'error-status-pairing'],
    tests: [{ file: CODES, shows: '-32021 without data' }],
  },
  {
    id: 'S32',
    claim: '-32022 names data.supported, on HTTP 400 (2026-07-28)',
    rules: ['unsupported-version-code', 'error-data-required', 'error-status-pairing'],
    tests: [{ file: 'integration/precision-versions.test.ts', shows: '-32602 "bad version" on HTTP 200 is flagged' }],
  },
  {
    id: 'S33',
    claim: 'A 2026-07-28 server no longer sends -32002',
    rules: ['retired-code', 'resource-not-found-code'],
    tests: [{ file: CODES, shows: 'tools/call -32002' }],
  },
  {
    id: 'S34',
    claim: 'Clients keep accepting -32002 from older servers',
    rules: [],
    tests: [],
    gap: "a client's duty: the proxy leaves -32002 alone before 2026-07-28 (resources/read -32002 under 2025-11-25 stays silent)",
  },
  {
    id: 'S35',
    claim: '-32042 exists only in 2025-11-25',
    rules: ['retired-code', 'error-data-required'],
    tests: [{ file: CODES, shows: '-32042 with elicitations' }],
  },
  {
    id: 'S36',
    claim: "A server's own codes lie outside -32768..-32000",
    rules: ['reserved-code', 'legacy-range-code'],
    tests: [{ file: CODES, shows: '-32650 (JSON-RPC reserved)' }],
  },
  {
    id: 'S37',
    claim: 'With the initialize handshake, an unsupported version is -32602 with data.supported and data.requested',
    rules: ['initialize-version-error'],
    tests: [{ file: REFUSALS, shows: 'a legacy initialize offering "1.0.0" refused with -32603' }],
  },
  {
    id: 'S38',
    claim: 'Clients hand tool execution errors to the model, and may hand it protocol errors',
    rules: [],
    tests: [],
    gap: 'what a client does with an answer is not on the wire',
  },
  {
    id: 'S39',
    claim: 'Set isError: true explicitly: a failure said only in the text is a success',
    rules: ['silent-success', 'iserror-not-boolean'],
    tests: [{ file: TOOLS, shows: 'a failure without isError' }],
    gap: 'a heuristic (a warning): judged when the whole text states the failure, and tools whose output is failures (validators, code runners, log readers) are exempt; measured on the precision corpus (docs/rules.md, "What silent-success calls a failure")',
  },
  {
    id: 'S40',
    claim: 'Say what is wrong and which values are valid',
    rules: ['vague-iserror'],
    tests: [{ file: TOOLS, shows: 'a vague isError for schema-invalid arguments' }],
    gap: "judged for arguments that fail the tool's inputSchema: whether the text names the failing parameter, not whether it gives the valid values",
  },
  {
    id: 'S41',
    claim: "Use the inputSchema's parameter names",
    rules: ['vague-iserror'],
    tests: [{ file: TOOLS, shows: 'an isError naming the parameter (good)' }],
    gap: 'as S40',
  },
  {
    id: 'S42',
    claim: 'Say whether retrying can help',
    rules: [],
    tests: [],
    gap: 'whether a retry helps is the server\'s knowledge, and "retry" advice in free text is no rule a wire can hold a server to',
  },
  {
    id: 'S43',
    claim: 'No stack traces, internal hostnames or file paths in error text',
    rules: ['leaked-stack-trace', 'leaked-internal-host', 'leaked-path', 'leaked-private-address'],
    tests: [
      { file: 'integration/rules-leaks.test.ts', shows: 'all stay silent on a clean error' },
      { file: 'integration/rules-error-pages.test.ts', shows: 'an Express 500 page' },
    ],
  },
  {
    id: 'S44',
    claim: 'A call with an expired or unknown handle is a tool execution error (2026-07-28)',
    rules: [],
    tests: [],
    gap: "which argument is a handle, and whether it expired, is the server's knowledge: nothing on the wire marks it",
  },
  {
    id: 'S45',
    claim: 'The unknown-tool message reads "Unknown tool: <name>" (the spec\'s example)',
    rules: [],
    tests: [],
    gap: 'an example, not a rule: any -32602 is accepted; enforce writes exactly this message',
  },
  {
    id: 'S46',
    claim: 'A client cannot parse an HTML page, an empty body or a dropped connection (JSON in data: lines for SSE)',
    rules: ['html-body', 'empty-body', 'non-json-body', 'non-utf8-body', 'not-jsonrpc-body', 'no-response', 'stdio-not-a-message'],
    tests: [{ file: 'integration/sse-html-page.test.ts', shows: 'audit: html-body' }],
  },
];

const cell = (text: string): string => text.replace(/\|/g, '\\|');

/** The claims as the docs' table: claim, rules, test, and what stays unjudged and why. */
export function claimsMarkdown(claims: readonly ArticleClaim[] = ARTICLE_CLAIMS): string {
  const rows = claims.map((c) => {
    const rules = c.rules.length > 0 ? c.rules.map((r) => `\`${r}\``).join(', ') : '—';
    const tests = c.tests.length > 0 ? [...new Set(c.tests.map((t) => `\`test/${t.file}\``))].join(', ') : '—';
    const judged = c.gap === undefined ? 'in full' : c.rules.length === 0 ? `no: ${cell(c.gap)}` : `in part: ${cell(c.gap)}`;
    return `| ${c.id} | ${cell(c.claim)} | ${rules} | ${tests} | ${judged} |`;
  });
  return ['| # | claim | rules | tests | judged |', '|---|---|---|---|---|', ...rows].join('\n');
}
