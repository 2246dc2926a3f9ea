// Tool rules on real traffic: a scripted server with real inputSchemas misbehaves in one way per
// case, and the rule fires; the same server answering correctly leaves it silent. Version-specific
// rules are run under the versions where they differ.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ECHO_TOOL, assertFires, assertSilent, runScenario, type Reply, type Scenario } from '../helpers/rule-scenario.ts';

const SEARCH_TOOL = {
  name: 'search',
  description: 'Searches the index',
  inputSchema: {
    type: 'object',
    properties: {
      query: { type: 'string', minLength: 1 },
      limit: { type: 'integer', minimum: 1, maximum: 50 },
      mode: { enum: ['fast', 'deep'] },
    },
    required: ['query'],
    additionalProperties: false,
  },
};
/** A 2020-12-only keyword: draft-07 validators (legacy versions before 2025-11-25) ignore it. */
const RANGE_TOOL = {
  name: 'range',
  inputSchema: {
    type: 'object',
    properties: { from: { type: 'integer' }, to: { type: 'integer' } },
    dependentRequired: { from: ['to'] },
  },
};
/** Formats the proxy asserts (date, email) and one it does not know (an annotation). */
const BOOK_TOOL = {
  name: 'book',
  inputSchema: {
    type: 'object',
    properties: {
      date: { type: 'string', format: 'date' },
      contact: { type: 'string', format: 'email' },
      phone: { type: 'string', format: 'phone' },
    },
    required: ['date'],
  },
};
const TOOLS = [ECHO_TOOL, SEARCH_TOOL, RANGE_TOOL, BOOK_TOOL];

type Req = Parameters<Scenario['respond']>[0];
const MODERN = '2026-07-28';

/** A result as the version wants it (modern results carry resultType). */
const result =
  (version: string, body: Record<string, unknown>) =>
  (req: Req): Reply => ({
    json: {
      jsonrpc: '2.0',
      id: req?.id,
      result: version === MODERN && !('resultType' in body) ? { resultType: 'complete', ...body } : body,
    },
  });
const ok = (text: string) => (v: string) => result(v, { content: [{ type: 'text', text }] });
const toolError = (text: string) => (v: string) => result(v, { content: [{ type: 'text', text }], isError: true });
const rpcError =
  (code: number, message: string) =>
  () =>
  (req: Req): Reply => ({ json: { jsonrpc: '2.0', id: req?.id, error: { code, message } } });
const raw = (body: Record<string, unknown>) => (v: string) => result(v, body);

const call = (name: string, args?: unknown) => ({
  method: 'tools/call',
  params: args === undefined ? { name } : { name, arguments: args },
});
const noCatalogue = { limits: { maxToolsPerSession: 0 } };

interface Case {
  title: string;
  versions: readonly string[];
  request: Scenario['request'];
  respond: (version: string) => Scenario['respond'];
  fires?: readonly string[];
  silent?: readonly string[];
  /** How many findings of the first `fires` rule (default: at least one). */
  count?: number;
  /** Fields the first fired rule's record must match. */
  expect?: { pointer?: string; severity?: string; message?: RegExp; fix?: RegExp };
  tools?: Array<Record<string, unknown>>;
  proxy?: Scenario['proxy'];
}

const UNKNOWN = ['unknown-tool-as-iserror', 'unknown-tool-as-result', 'unknown-tool-wrong-code'];
const EVERY = [
  ...UNKNOWN,
  'silent-success',
  'iserror-not-boolean',
  'tool-result-shape',
  'tools-list-shape',
  'input-validation-as-protocol-error',
  'vague-iserror',
  'tool-failure-as-protocol-error',
];
const others = (...fired: string[]) => EVERY.filter((r) => !fired.includes(r));
const TWO = ['2025-06-18', MODERN];

const cases: Case[] = [
  // Unknown tools, judged by the catalogue from tools/list.
  {
    title: 'unknown tool answered with isError',
    versions: ['2024-11-05', ...TWO],
    request: call('nope', {}),
    respond: toolError('MCP error -32602: Tool nope not found'),
    fires: ['unknown-tool-as-iserror'],
    silent: others('unknown-tool-as-iserror'),
    expect: { pointer: '/response/result/isError', severity: 'error', fix: /-32602.*Unknown tool: nope/ },
  },
  {
    title: 'unknown tool answered with a plain result',
    versions: TWO,
    request: call('nope', {}),
    respond: ok('done'),
    fires: ['unknown-tool-as-result'],
    silent: others('unknown-tool-as-result'),
    expect: { pointer: '/response/result', severity: 'error' },
  },
  {
    title: 'unknown tool answered with -32601',
    versions: TWO,
    request: call('nope', {}),
    respond: rpcError(-32601, 'Method not found'),
    fires: ['unknown-tool-wrong-code'],
    silent: others('unknown-tool-wrong-code'),
    expect: { pointer: '/response/error/code', message: /-32601/ },
  },
  {
    title: 'unknown tool answered with -32602 (good)',
    versions: TWO,
    request: call('nope', {}),
    respond: rpcError(-32602, 'Unknown tool: nope'),
    silent: EVERY,
  },
  // Without a complete catalogue, only the server's own words tell.
  {
    title: 'no catalogue: isError says the tool is unknown',
    versions: TWO,
    request: call('nope', {}),
    respond: toolError('Unknown tool: nope'),
    proxy: noCatalogue,
    fires: ['unknown-tool-as-iserror'],
    expect: { message: /calls unknown/ },
  },
  {
    title: 'no catalogue: -32603 whose message says the tool is unknown',
    versions: TWO,
    request: call('nope', {}),
    respond: rpcError(-32603, 'Tool "nope" not found'),
    proxy: noCatalogue,
    fires: ['unknown-tool-wrong-code'],
  },
  {
    title: 'no catalogue: a tool failure that mentions a missing file (good)',
    versions: TWO,
    request: call('echo', { text: 'x' }),
    respond: toolError('Tool execution failed: file not found'),
    proxy: noCatalogue,
    silent: UNKNOWN,
  },
  {
    title: 'no catalogue: a plain result (cannot tell)',
    versions: TWO,
    request: call('nope', {}),
    respond: ok('done'),
    proxy: noCatalogue,
    silent: EVERY,
  },
  {
    title: 'a tool added after tools/list (list_changed makes the catalogue stale)',
    versions: ['2025-06-18'],
    request: call('nope', {}),
    respond: () => (req) => ({
      sse: [
        'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n',
        `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: req?.id, result: { content: [{ type: 'text', text: 'done' }] } })}\n\n`,
      ],
    }),
    silent: EVERY,
  },
  // Results that hide a failure.
  {
    title: 'a failure without isError',
    versions: TWO,
    request: call('echo', { text: 'x' }),
    respond: ok('Error: connect ECONNREFUSED 10.0.0.1:5432'),
    fires: ['silent-success'],
    silent: others('silent-success'),
    expect: { pointer: '/response/result/content/0/text', severity: 'warning', fix: /isError/ },
  },
  {
    title: 'a failure statement in the first text block after an image',
    versions: ['2025-06-18'],
    request: call('echo', { text: 'x' }),
    respond: raw({
      content: [
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'text', text: 'Error: could not render the chart' },
        { type: 'text', text: 'Please try again with fewer series.' },
      ],
    }),
    fires: ['silent-success'],
    expect: { pointer: '/response/result/content/1/text' },
  },
  // silent-success: the whole text, the call's arguments, the tool's own words.
  {
    title: 'a failure followed by advice is a failure',
    versions: ['2025-06-18', MODERN],
    request: call('echo', { text: 'x' }),
    respond: ok('Failed to create the ticket.\nPlease check that JIRA_TOKEN is set and try again.'),
    fires: ['silent-success'],
  },
  {
    title: 'a failure with its stack frames is a failure',
    versions: ['2025-06-18'],
    request: call('echo', { text: 'x' }),
    respond: ok("TypeError: Cannot read properties of undefined (reading 'price')\n    at quote (/srv/app/quote.js:12:5)"),
    fires: ['silent-success', 'leaked-stack-trace'],
  },
  {
    title: 'a failure followed by other lines is a report (good)',
    versions: ['2025-06-18', MODERN],
    request: call('echo', { text: 'x' }),
    respond: ok('Error: the card was declined.\nInvalid email address.\nFailed to save your changes.'),
    silent: ['silent-success'],
  },
  {
    title: "a statement opened by the call's own argument quotes it (good)",
    versions: ['2025-06-18'],
    tools: [
      {
        name: 'lookup_errno',
        description: 'Look up an errno name',
        inputSchema: { type: 'object', properties: { name: { type: 'string' } } },
      },
    ],
    request: call('lookup_errno', { name: 'ENOENT' }),
    respond: ok('ENOENT: no such file or directory (errno 2)'),
    silent: ['silent-success'],
  },
  {
    title: 'an argument that reads as a failure makes the result about it (good)',
    versions: ['2025-06-18'],
    tools: [
      {
        name: 'to_english',
        description: 'Renders text in English',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
      },
    ],
    request: call('to_english', { text: 'Fehler: Datei nicht gefunden' }),
    respond: ok('Error: File not found'),
    silent: ['silent-success'],
  },
  {
    title: "a bare keyword argument quotes nothing: the failure is the call's",
    versions: ['2025-06-18'],
    tools: [
      {
        name: 'get_message',
        description: 'Returns a message of a type',
        inputSchema: { type: 'object', properties: { type: { enum: ['error', 'success'] } } },
      },
    ],
    request: call('get_message', { type: 'success' }),
    respond: ok('Error: Operation failed'),
    fires: ['silent-success'],
  },
  {
    title: 'an argument that asks for failures makes a failure the answer (good)',
    versions: ['2025-06-18'],
    tools: [
      {
        name: 'get_message',
        description: 'Returns a message of a type',
        inputSchema: { type: 'object', properties: { type: { enum: ['error', 'success'] } } },
      },
    ],
    request: call('get_message', { type: 'error' }),
    respond: ok('Error: Operation failed'),
    silent: ['silent-success'],
  },
  {
    title: "a statement naming the tool's own action is about the call, even when the call asked for failures",
    versions: ['2025-06-18'],
    tools: [
      {
        name: 'list_workflow_runs',
        description: 'List workflow runs, failed ones included',
        inputSchema: { type: 'object', properties: { status: { type: 'string' } } },
      },
    ],
    request: call('list_workflow_runs', { status: 'failure' }),
    respond: ok('Failed to list workflow runs: Bad credentials'),
    fires: ['silent-success'],
  },
  {
    title: "a code runner's bare stderr is the program's output (good)",
    versions: ['2025-06-18'],
    tools: [
      {
        name: 'execute_cell',
        description: 'Execute a code cell in the running kernel and return its outputs',
        inputSchema: { type: 'object', properties: { cell_index: { type: 'integer' } } },
      },
    ],
    request: call('execute_cell', { cell_index: 4 }),
    respond: ok("NameError: name 'df' is not defined"),
    silent: ['silent-success'],
  },
  {
    title: 'a tool whose description says it validates gives verdicts (good)',
    versions: ['2025-06-18', MODERN],
    tools: [
      {
        name: 'check_value',
        description: 'Validates an email address and says why it is not valid',
        inputSchema: { type: 'object', properties: { value: { type: 'string' } } },
      },
    ],
    request: call('check_value', { value: 'bob@' }),
    respond: ok('Invalid email address: the domain part is missing.'),
    silent: ['silent-success'],
  },
  {
    title: 'the same verdict from a tool that does not judge its input is a failure',
    versions: ['2025-06-18'],
    tools: [
      {
        name: 'send_invite',
        description: 'Sends an invitation email',
        inputSchema: { type: 'object', properties: { value: { type: 'string' } } },
      },
    ],
    request: call('send_invite', { value: 'bob@' }),
    respond: ok('Invalid email address: the domain part is missing.'),
    fires: ['silent-success'],
  },
  {
    title: 'a JSON error envelope is a failure; a record with an error field is not (good)',
    versions: ['2025-06-18'],
    request: call('echo', { text: 'x' }),
    respond: ok('{"error":"rate limit exceeded","retryAfterSeconds":60}'),
    fires: ['silent-success'],
  },
  {
    title: 'a job record with an error field is data (good)',
    versions: ['2025-06-18'],
    request: call('echo', { text: 'x' }),
    respond: ok('{"job":"nightly","status":"failed","error":"timeout after 30m"}'),
    silent: ['silent-success'],
  },
  {
    title: 'a traceback in the second block: program output, not a failed call (good)',
    versions: ['2025-06-18'],
    request: call('echo', { text: 'x' }),
    respond: raw({
      content: [
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'text', text: 'ok' },
        { type: 'text', text: 'Traceback (most recent call last):\n  File "x.py"' },
      ],
    }),
    silent: ['silent-success'],
  },
  {
    title: 'ordinary output (good)',
    versions: TWO,
    request: call('echo', { text: 'x' }),
    respond: ok('Found 3 results.\n2 tests failed, 40 passed\nNo invalid entries'),
    silent: EVERY,
  },
  {
    title: 'a failure with isError (good)',
    versions: TWO,
    request: call('echo', { text: 'x' }),
    respond: toolError('Error: rate limit exceeded, retry in 20 s'),
    silent: EVERY,
  },
  // isError type.
  {
    title: 'isError as a string',
    versions: TWO,
    request: call('echo', { text: 'x' }),
    respond: raw({ content: [{ type: 'text', text: 'boom' }], isError: 'true' }),
    fires: ['iserror-not-boolean'],
    silent: ['silent-success', 'tool-result-shape'],
    expect: { pointer: '/response/result/isError' },
  },
  {
    title: 'isError false (good)',
    versions: TWO,
    request: call('echo', { text: 'x' }),
    respond: raw({ content: [{ type: 'text', text: 'x' }], isError: false }),
    silent: EVERY,
  },
  // CallToolResult shape.
  {
    title: 'a result without content',
    versions: TWO,
    request: call('echo', { text: 'x' }),
    respond: raw({ text: 'x' }),
    fires: ['tool-result-shape'],
    expect: { pointer: '/response/result/content' },
  },
  {
    title: 'a block type no version defines, and a text block without text',
    versions: TWO,
    request: call('echo', { text: 'x' }),
    respond: raw({
      content: [
        { type: 'markdown', text: '# x' },
        { type: 'text', value: 'x' },
      ],
    }),
    fires: ['tool-result-shape'],
    count: 2,
    expect: { pointer: '/response/result/content/0', message: /markdown/ },
  },
  {
    title: 'resource_link before 2025-06-18',
    versions: ['2025-03-26'],
    request: call('echo', { text: 'x' }),
    respond: raw({ content: [{ type: 'resource_link', uri: 'file:///a', name: 'a' }] }),
    fires: ['tool-result-shape'],
    expect: { message: /resource_link.*2025-03-26/ },
  },
  {
    title: 'resource_link from 2025-06-18 (good)',
    versions: ['2025-06-18'],
    request: call('echo', { text: 'x' }),
    respond: raw({ content: [{ type: 'resource_link', uri: 'file:///a', name: 'a' }] }),
    silent: EVERY,
  },
  {
    title: 'audio in 2024-11-05',
    versions: ['2024-11-05'],
    request: call('echo', { text: 'x' }),
    respond: raw({ content: [{ type: 'audio', data: 'AAAA', mimeType: 'audio/wav' }] }),
    fires: ['tool-result-shape'],
  },
  {
    title: 'audio from 2025-03-26 (good)',
    versions: ['2025-03-26'],
    request: call('echo', { text: 'x' }),
    respond: raw({ content: [{ type: 'audio', data: 'AAAA', mimeType: 'audio/wav' }] }),
    silent: EVERY,
  },
  {
    title: 'an InputRequiredResult has no content (good in 2026-07-28)',
    versions: [MODERN],
    request: call('echo', { text: 'x' }),
    respond: raw({ resultType: 'input_required', inputRequests: { q: { method: 'roots/list', params: {} } } }),
    silent: EVERY,
  },
  {
    title: 'the same InputRequiredResult on a legacy exchange',
    versions: ['2025-11-25'],
    request: call('echo', { text: 'x' }),
    respond: raw({ resultType: 'input_required', inputRequests: { q: { method: 'roots/list', params: {} } } }),
    fires: ['tool-result-shape'],
  },
  {
    title: 'a CreateTaskResult for a task-augmented call (good)',
    versions: ['2025-11-25'],
    request: { method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' }, task: { ttl: 60000 } } },
    respond: raw({
      task: { taskId: 't1', status: 'working', createdAt: '2025-11-25T00:00:00Z', lastUpdatedAt: '2025-11-25T00:00:00Z', ttl: 60000 },
    }),
    silent: EVERY,
  },
  // tools/list shape.
  {
    title: 'tools without name, inputSchema, or an object type',
    versions: TWO,
    request: { method: 'tools/list', params: {} },
    respond: raw({
      tools: [
        { name: 'a' },
        { name: 'b', inputSchema: { type: 'string' } },
        { inputSchema: { type: 'object' } },
        { name: 'ok', inputSchema: { type: 'object' } },
      ],
    }),
    fires: ['tools-list-shape'],
    count: 3,
    expect: { pointer: '/response/result/tools/0/inputSchema' },
  },
  {
    title: 'a tools/list result without tools',
    versions: TWO,
    request: { method: 'tools/list', params: {} },
    respond: raw({ items: [] }),
    fires: ['tools-list-shape'],
  },
  {
    title: 'a good tools/list',
    versions: TWO,
    request: { method: 'tools/list', params: {} },
    respond: (v) => result(v, { tools: TOOLS, ...(v === MODERN ? { ttlMs: 0, cacheScope: 'private' } : {}) }),
    silent: EVERY,
  },
  // Input validation errors: isError from 2025-11-25 on.
  {
    title: 'schema-invalid arguments answered with -32602',
    versions: ['2025-11-25', MODERN],
    request: call('search', { limit: 0 }),
    respond: rpcError(-32602, 'Invalid arguments for tool search'),
    fires: ['input-validation-as-protocol-error'],
    silent: others('input-validation-as-protocol-error'),
    expect: { pointer: '/response/error', severity: 'warning', message: /query.*schema\.ts/, fix: /isError/ },
  },
  {
    title: 'the same before 2025-11-25 (ambiguous then)',
    versions: ['2025-06-18'],
    request: call('search', { limit: 0 }),
    respond: rpcError(-32602, 'Invalid arguments for tool search'),
    silent: EVERY,
  },
  {
    title: 'valid arguments and an internal error',
    versions: [MODERN],
    request: call('search', { query: 'q' }),
    respond: rpcError(-32603, 'Internal error'),
    silent: EVERY,
  },
  {
    title: 'arguments that are not an object (a malformed request)',
    versions: [MODERN],
    request: call('search', 'q'),
    respond: rpcError(-32602, 'arguments must be an object'),
    silent: EVERY,
  },
  {
    title: 'a 2020-12 keyword the arguments break, answered with -32602',
    versions: ['2025-11-25'],
    request: call('range', { from: 1 }),
    respond: rpcError(-32602, 'to is required with from'),
    fires: ['input-validation-as-protocol-error'],
    expect: { message: /\/to/ },
  },
  // format: the article's own probe, a date that is no date.
  {
    title: 'a date that is no date (format: date) answered with -32602',
    versions: ['2025-11-25', MODERN],
    request: call('book', { date: 'not-a-date' }),
    respond: rpcError(-32602, 'Invalid params'),
    fires: ['input-validation-as-protocol-error'],
    silent: others('input-validation-as-protocol-error'),
    expect: { severity: 'warning', message: /\/date.*must match format "date"/ },
  },
  {
    title: 'an email that is none, answered with a vague isError',
    versions: ['2025-11-25', MODERN],
    request: call('book', { date: '2026-12-08', contact: 'someone at example' }),
    respond: toolError('Booking failed.'),
    fires: ['vague-iserror'],
    expect: { fix: /contact/ },
  },
  {
    title: "a well-formed date refused with -32602 for the server's own reasons (cannot tell)",
    versions: ['2025-11-25', MODERN],
    request: call('book', { date: '2026-12-08' }),
    respond: rpcError(-32602, 'No rooms left on that date'),
    silent: EVERY,
  },
  {
    title: 'a format the proxy does not assert (an annotation) refused with -32602',
    versions: ['2025-11-25', MODERN],
    request: call('book', { date: '2026-12-08', phone: 'call me maybe' }),
    respond: rpcError(-32602, 'Invalid phone'),
    silent: EVERY,
  },
  {
    title: 'a date that is no date answered with an isError naming it (good)',
    versions: ['2025-11-25', MODERN],
    request: call('book', { date: 'next tuesday' }),
    respond: toolError('Invalid date "next tuesday": use YYYY-MM-DD, e.g. 2026-12-08'),
    silent: EVERY,
  },
  // A tool that ran and failed, reported as a JSON-RPC error (issue 43).
  {
    title: 'a tool failure (ENOENT) reported as JSON-RPC -32603',
    versions: ['2024-11-05', ...TWO],
    request: call('echo', { text: 'hi' }),
    respond: rpcError(-32603, "ENOENT: no such file or directory, open '/data/notes.txt'"),
    fires: ['tool-failure-as-protocol-error'],
    expect: { pointer: '/response/error', severity: 'warning', fix: /isError/ },
  },
  {
    title: 'a TypeError thrown in the tool, reported as JSON-RPC -32000',
    versions: TWO,
    request: call('echo', { text: 'hi' }),
    respond: rpcError(-32000, "TypeError: Cannot read properties of undefined (reading 'id')"),
    fires: ['tool-failure-as-protocol-error'],
  },
  {
    title: 'a generic "Internal error" (-32603): the server failed, no tool failure to read (silent)',
    versions: TWO,
    request: call('echo', { text: 'hi' }),
    respond: rpcError(-32603, 'Internal error'),
    silent: ['tool-failure-as-protocol-error'],
  },
  {
    title: 'a failure statement for an unknown tool, or for invalid arguments: their own rules, not this one (silent)',
    versions: TWO,
    request: call('nope', {}),
    respond: rpcError(-32603, 'Failed to run tool nope: not found'),
    silent: ['tool-failure-as-protocol-error'],
  },
  {
    title: 'a failure statement as -32602 for arguments that fail the schema (silent)',
    versions: TWO,
    request: call('search', { limit: 0 }),
    respond: rpcError(-32602, 'Invalid arguments: query is required'),
    silent: ['tool-failure-as-protocol-error'],
  },
  // isError that names nothing the model can fix.
  {
    title: 'a vague isError for schema-invalid arguments',
    versions: TWO,
    request: call('search', { limit: 0, extra: true }),
    respond: toolError('Something went wrong, please try again.'),
    fires: ['vague-iserror'],
    silent: others('vague-iserror'),
    expect: { pointer: '/response/result/content', severity: 'warning', fix: /query/ },
  },
  {
    title: 'an isError about a backend that failed, for schema-invalid arguments: the backend is what is wrong (silent)',
    versions: TWO,
    request: call('search', { limit: 0, extra: true }),
    respond: toolError('Error searching libraries: TypeError: fetch failed'),
    silent: ['vague-iserror'],
  },
  {
    title: 'an isError naming an unreachable backend by its address (silent)',
    versions: TWO,
    request: call('search', { limit: 0 }),
    respond: toolError('dial tcp 10.0.3.7:9200: connect: connection refused'),
    silent: ['vague-iserror'],
  },
  {
    title: 'an isError that only looks like one about a backend ("request" is no timeout): still vague',
    versions: TWO,
    request: call('search', { limit: 0 }),
    respond: toolError('Bad request: the service could not process it'),
    fires: ['vague-iserror'],
  },
  {
    title: 'an isError naming the parameter (good)',
    versions: [...TWO, '2025-11-25'],
    request: call('search', { query: 'q', mode: 'slow' }),
    respond: toolError('Invalid mode "slow": use fast or deep'),
    silent: EVERY,
  },
  {
    title: 'a vague isError when only 2020-12 says the arguments are wrong',
    versions: ['2025-11-25'],
    request: call('range', { from: 1 }),
    respond: toolError('Bad request'),
    fires: ['vague-iserror'],
  },
  {
    title: 'the same under draft-07 (2025-06-18: the arguments are valid)',
    versions: ['2025-06-18'],
    request: call('range', { from: 1 }),
    respond: toolError('Bad request'),
    silent: EVERY,
  },
];

describe('tool rules', () => {
  for (const c of cases) {
    for (const version of c.versions) {
      test(`${c.title} (${version})`, async () => {
        const res = await runScenario({
          version,
          tools: c.tools ?? TOOLS,
          request: c.request,
          respond: c.respond(version),
          proxy: c.proxy,
        });
        assert.equal(res.records.filter((r) => r.msg === 'rule failed').length, 0, 'no rule threw');
        const [first, ...more] = c.fires ?? [];
        if (first) {
          const v = assertFires(res, first);
          assert.equal(v.method, c.request.method);
          assert.equal(v.protocolVersion, version);
          if (c.count !== undefined) assert.equal(res.violations.filter((x) => x.rule === first).length, c.count);
          if (c.expect?.pointer) assert.equal(v.pointer, c.expect.pointer);
          if (c.expect?.severity) assert.equal(v.severity, c.expect.severity);
          if (c.expect?.message) assert.match(String(v.message), c.expect.message);
          if (c.expect?.fix) assert.match(String(v.fix), c.expect.fix);
        }
        for (const rule of more) assertFires(res, rule);
        for (const rule of c.silent ?? []) assertSilent(res, rule);
      });
    }
  }
});
