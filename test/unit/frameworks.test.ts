// What built a server, told from what it sends (#46): each sign on the answer its framework writes
// (read in that framework's source, src/rules/explanations/frameworks.ts names where), the
// strongest sign winning, nothing told from a neutral answer; and the fixes each rule's explanation
// has for a framework, found through the broader framework it is within.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Message } from '../../src/codec/jsonrpc.ts';
import { FRAMEWORK_IDS, lineage } from '../../src/frameworks/frameworks.ts';
import { signsMarkdown } from '../../src/frameworks/markdown.ts';
import { recognizeFramework, SIGN_LIST } from '../../src/frameworks/recognize.ts';
import { frameworkFixLine, frameworkFixOf } from '../../src/rules/explain.ts';
import { EXPLANATIONS } from '../../src/rules/explanations/index.ts';
import { docBlock } from '../helpers/doc-blocks.ts';

const isError = (text: string): Message => ({
  kind: 'result',
  id: 3,
  result: { content: [{ type: 'text', text }], isError: true },
  value: {},
});
const error = (code: number, message: string): Message => ({ kind: 'error', id: 3, code, message, data: undefined, value: {} });
const told = (info: { name?: string; version?: string } | undefined, ...answers: Message[]) => recognizeFramework(info, answers)?.framework;

test('each framework is told by the answer it writes to an unknown tool, or by its default serverInfo', () => {
  assert.equal(told(undefined, isError('MCP error -32602: Tool nope not found')), 'typescript-sdk-v1-mcpserver');
  assert.equal(told(undefined, error(-32602, 'Tool nope not found')), 'typescript-sdk-v2');
  assert.equal(
    told(undefined, error(-32000, 'Bad Request: Unsupported protocol version: 1999-01-01 (supported versions: 2025-11-25)')),
    'typescript-sdk',
  );
  assert.equal(
    told(undefined, error(-32000, 'Not Acceptable: Client must accept both application/json and text/event-stream')),
    'typescript-sdk',
  );
  assert.equal(told(undefined, isError('Unknown tool: nope')), 'python-sdk');
  assert.equal(told(undefined, isError("Unknown tool: 'nope'")), 'fastmcp');
  assert.equal(told(undefined, error(-32602, "Unknown tool: 'nope'")), 'csharp-sdk');
  assert.equal(told(undefined, isError("An error occurred invoking 'lookup'.")), 'csharp-sdk');
  assert.equal(told(undefined, error(-32602, 'Unknown tool: invalid_tool_name')), 'java-sdk');
  assert.equal(told(undefined, error(-32602, 'unknown tool "nope"')), 'go-sdk');
  assert.equal(told(undefined, error(-32602, "tool 'nope' not found: tool not found")), 'mcp-go');
  assert.equal(told(undefined, error(-32602, 'tool not found')), 'rmcp');
  assert.equal(told({ name: 'rmcp', version: '0.16.0' }), 'rmcp');
  assert.equal(told({ name: 'FastMCP-3fa9' }), 'fastmcp');
  assert.equal(told({ name: 'FastMCP' }), 'python-sdk');
  assert.equal(told({ name: 'Java SDK MCP Server', version: '0.15.0' }), 'java-sdk');
});

test('a neutral answer or a chosen name tells nothing; the strongest sign wins', () => {
  assert.equal(told({ name: 'weather', version: '1.0.0' }, error(-32602, 'Unknown tool: nope'), isError('quota exceeded')), undefined);
  assert.equal(told(undefined, error(-32603, 'Tool nope not found')), undefined, 'the code matters');
  // The transport's refusal says only "TypeScript SDK"; McpServer's unknown-tool answer says which class.
  const both = recognizeFramework(undefined, [
    error(-32000, 'Bad Request: Server not initialized'),
    isError('MCP error -32602: Tool x not found'),
  ]);
  assert.deepEqual([both?.framework, both?.confidence], ['typescript-sdk-v1-mcpserver', 'high']);
});

test("a framework's fix is found through the framework it is within, and says where the SDK does it and what to do meanwhile", () => {
  assert.deepEqual(lineage('typescript-sdk-v1-mcpserver'), ['typescript-sdk-v1-mcpserver', 'typescript-sdk']);
  assert.equal(frameworkFixOf('leaked-path', 'typescript-sdk-v1-mcpserver')?.framework, 'typescript-sdk', 'the SDK-wide leak fix');
  assert.equal(frameworkFixOf('unknown-tool-as-iserror', 'typescript-sdk-v1-mcpserver')?.framework, 'typescript-sdk-v1-mcpserver');
  assert.equal(frameworkFixOf('unknown-tool-as-iserror', 'go-sdk'), undefined, 'the Go SDK answers -32602 itself: the general fix');
  assert.equal(frameworkFixLine('html-body', undefined), undefined);
  const line = frameworkFixLine('unknown-tool-as-iserror', 'python-sdk')!;
  assert.match(line, /^Python SDK .*: The SDK does it/);
  assert.match(line, /SDK issue: modelcontextprotocol\/python-sdk#1149/);
  assert.match(line, /Meanwhile: .*answers\.unknownTool/);
});

test('every framework fix names where it was read, and every framework id has a label and is told by some sign', () => {
  for (const [rule, e] of EXPLANATIONS)
    for (const [id, fix] of Object.entries(e.frameworks ?? {})) {
      assert.ok(FRAMEWORK_IDS.includes(id as never), `${rule}: ${id}`);
      assert.match(fix.source, /\d/, `${rule} / ${id}: a version or commit in its source`);
    }
  // The low-level Server answers through the same transport as McpServer and writes no answer of its own: no sign tells it.
  const untold = FRAMEWORK_IDS.filter((id) => !SIGN_LIST.some((s) => s.framework === id));
  assert.deepEqual(untold, ['typescript-sdk-v1-server']);
});

test("docs/rules.md's table of signs is what the code recognises", () => {
  assert.equal(docBlock('framework-signs'), signsMarkdown());
});
