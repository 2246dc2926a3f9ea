// The shapes of tool results and tool lists: isError a boolean, a content array of blocks the
// version defines, and tools with a name and an object inputSchema. The spec: server/tools,
// "Data Types" and "Tool Result", and the schema's Tool, CallToolResult and ContentBlock, e.g.
// https://modelcontextprotocol.io/specification/2025-06-18/server/tools#tool-result
import { type ContentType, VERSIONS, versionInfo } from '../mcp/versions.ts';
import { asRecord } from '../codec/json-value.ts';
import { excerpt } from '../redact/excerpt.ts';
import { pointer } from '../codec/json-pointer.ts';
import { type Answer, answerRule, knownVersion, quoted } from './read.ts';
import { deferredType, notFinal } from './tool-calls.ts';
import type { ExchangeRule, ExchangeSubject, Report, RuleInfo } from './types.ts';
import { ALL } from './versions.ts';

/** Findings one rule reports about one list at most. */
const MAX_REPORTS = 5;

/** The required fields of each CallToolResult content block type (the same in every version that has the type). */
const BLOCK_FIELDS: Readonly<Record<ContentType, ReadonlyArray<[field: string, type: 'string' | 'object']>>> = {
  text: [['text', 'string']],
  image: [
    ['data', 'string'],
    ['mimeType', 'string'],
  ],
  audio: [
    ['data', 'string'],
    ['mimeType', 'string'],
  ],
  resource: [['resource', 'object']],
  resource_link: [
    ['uri', 'string'],
    ['name', 'string'],
  ],
};

/** Every content type some version defines: what a version nobody defined is held to. */
const ANY_CONTENT_TYPE: readonly string[] = [...new Set(VERSIONS.flatMap((v) => v.contentTypes))];

const contentTypes = (version: string | undefined): readonly string[] => versionInfo(version)?.contentTypes ?? ANY_CONTENT_TYPE;

/** What is wrong with one content block, if anything. */
function blockProblem(block: unknown, types: readonly string[], version: string | undefined): string | undefined {
  const b = asRecord(block);
  if (!b) return 'is not an object';
  if (typeof b.type !== 'string') return 'has no string "type"';
  if (!types.includes(b.type)) return `has type ${quoted(b.type)}, which ${version ?? 'no version'} does not define`;
  for (const [field, kind] of BLOCK_FIELDS[b.type as ContentType]) {
    const ok = kind === 'object' ? asRecord(b[field]) !== undefined : typeof b[field] === kind;
    if (!ok) return `(type ${b.type}) lacks ${kind === 'object' ? 'an object' : 'a string'} "${field}"`;
  }
  return undefined;
}

/** A rule about the result of a client's `method`: its shape is the server's error. */
const shapeRule = (
  method: string,
  r: Pick<RuleInfo, 'id' | 'summary' | 'source'>,
  check: (s: ExchangeSubject, answer: Answer<'result'>) => Report[],
): ExchangeRule => answerRule('result', method, { group: 'tools', severity: 'error', versions: ALL, ...r }, check);

export const TOOL_SHAPE_RULES: readonly ExchangeRule[] = [
  shapeRule(
    'tools/call',
    {
      id: 'iserror-not-boolean',
      summary: 'A tools/call result carries isError that is not a JSON boolean',
      source: 'https://modelcontextprotocol.io/specification/2026-07-28/server/tools#tool-result',
    },
    (_s, answer) => {
      const result = asRecord(answer.result);
      if (!result || !('isError' in result) || typeof result.isError === 'boolean') return [];
      const value = result.isError;
      return [
        {
          message: `tools/call result has isError ${excerpt(value, 40)} (${value === null ? 'null' : typeof value}), which is not a boolean`,
          pointer: '/response/result/isError',
          evidence: excerpt(value),
          fix: 'send "isError": true for a failed call, and false or nothing for a successful one (a JSON boolean, not a string or number)',
        },
      ];
    },
  ),
  shapeRule(
    'tools/call',
    {
      id: 'tool-result-shape',
      summary: 'A tools/call result lacks a content array, or has content blocks the version does not define',
      source: 'https://modelcontextprotocol.io/specification/2026-07-28/server/tools#tool-result',
    },
    (s, answer) => {
      const result = asRecord(answer.result);
      if (!result) {
        return [
          {
            message: 'tools/call result is not an object (a CallToolResult with a content array)',
            pointer: '/response/result',
            evidence: excerpt(answer.result),
            fix: 'answer with a result object: {"content": [{"type": "text", "text": "…"}]}',
          },
        ];
      }
      if (notFinal(s, result)) return [];
      if (!Array.isArray(result.content)) {
        return [
          {
            message: `tools/call result has ${'content' in result ? 'a content that is not an array' : 'no content array'}`,
            pointer: '/response/result/content',
            evidence: excerpt('content' in result ? result.content : result),
            fix: 'always send "content": an array of content blocks, e.g. [{"type": "text", "text": "…"}] (an empty array when there is nothing to say)',
          },
        ];
      }
      const types = contentTypes(s.version);
      const reports: Report[] = [];
      result.content.forEach((block, i) => {
        const problem = reports.length < MAX_REPORTS ? blockProblem(block, types, knownVersion(s.version)) : undefined;
        if (!problem) return;
        reports.push({
          message: `tools/call result content[${i}] ${problem}`,
          pointer: pointer('response', 'result', 'content', i),
          evidence: excerpt(block),
          fix: `send content blocks of the types ${knownVersion(s.version) ?? 'the version'} defines (${types.join(', ')}) with their required fields; put anything else in a text block`,
        });
      });
      return reports;
    },
  ),
  shapeRule(
    'tools/list',
    {
      id: 'tools-list-shape',
      summary: 'A tools/list result has tools without a name or inputSchema, or whose inputSchema.type is not "object"',
      source: 'https://modelcontextprotocol.io/specification/2026-07-28/server/tools#tool',
    },
    (s, answer) => {
      const result = asRecord(answer.result);
      if (result && deferredType(s, result)) return [];
      if (!result || !Array.isArray(result.tools)) {
        return [
          {
            message: 'tools/list result has no tools array',
            pointer: result ? '/response/result/tools' : '/response/result',
            evidence: excerpt(result?.tools ?? answer.result),
            fix: 'answer tools/list with {"tools": [{"name": "…", "inputSchema": {"type": "object"}}]}',
          },
        ];
      }
      const reports: Report[] = [];
      result.tools.forEach((entry, i) => {
        if (reports.length >= MAX_REPORTS) return;
        const tool = asRecord(entry);
        const label = typeof tool?.name === 'string' ? quoted(tool.name, 80) : `tools[${i}]`;
        const at = (...rest: Array<string | number>) => pointer('response', 'result', 'tools', i, ...rest);
        let problem: { message: string; pointer: string; evidence: unknown } | undefined;
        if (!tool) problem = { message: `tools/list tools[${i}] is not an object`, pointer: at(), evidence: entry };
        else if (typeof tool.name !== 'string')
          problem = { message: `tools/list tools[${i}] has no string name`, pointer: at('name'), evidence: tool.name ?? tool };
        else if (!asRecord(tool.inputSchema))
          problem = {
            message: `tools/list tool ${label} has ${tool.inputSchema === undefined ? 'no' : 'a non-object'} inputSchema`,
            pointer: at('inputSchema'),
            evidence: tool.inputSchema ?? tool,
          };
        else if (asRecord(tool.inputSchema)?.type !== 'object') {
          const type = asRecord(tool.inputSchema)?.type;
          problem = {
            message: `tools/list tool ${label} has inputSchema.type ${type === undefined ? 'missing' : excerpt(type, 40)}, not "object"`,
            pointer: at('inputSchema', 'type'),
            evidence: tool.inputSchema,
          };
        }
        if (problem) {
          reports.push({
            ...problem,
            evidence: excerpt(problem.evidence),
            fix: 'give every tool a string "name" and an "inputSchema" whose "type" is "object" ({"type": "object", "properties": {}} for a tool without arguments)',
          });
        }
      });
      return reports;
    },
  ),
];
