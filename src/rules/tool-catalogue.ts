// What a tool's catalogue entry promises, held to account: a tool that declares an outputSchema
// returns structuredContent that validates against it, and a tool's definition does not
// change between tools/list answers unless the server announced it with
// notifications/tools/list_changed: a silent change of a description or schema after the
// client approved the tool is the "rug pull" of tool poisoning.
import { asRecord } from '../codec/json-value.ts';
import { excerpt } from '../redact/excerpt.ts';
import { answerOf, quoted } from './read.ts';
import { validateArguments } from './tool-arguments.ts';
import type { ExchangeRule, ExchangeSubject, Report } from './types.ts';
import { ALL, where } from './versions.ts';

/** The versions with structured output (outputSchema, structuredContent). */
const STRUCTURED_VERSIONS = where((v) => v.structuredOutput);

/** A tools/call result that owes structured output, with its tool and the tool's outputSchema. */
interface Owed {
  tool: string;
  schema: Record<string, unknown>;
  result: Record<string, unknown>;
}

/** The result of a catalogued tool with an outputSchema, unless it is an error result. */
function owesStructured(s: ExchangeSubject): Owed | undefined {
  const tool = s.request.tool;
  const answer = answerOf(s, 'result', 'tools/call');
  if (tool === undefined || !answer) return undefined;
  const schema = asRecord(s.session.tools.get(tool)?.outputSchema);
  const result = asRecord(answer.result);
  // An error result reports a failure: it owes no structured output.
  return schema && result && result.isError !== true ? { tool, schema, result } : undefined;
}

/**
 * The outputSchema structured-output validates this exchange's structuredContent against, if it
 * does. Coverage reads it: a schema the proxy cannot run leaves such an exchange not judged in full.
 */
export function outputSchemaRead(s: ExchangeSubject): unknown {
  const owed = s.version !== undefined && STRUCTURED_VERSIONS.includes(s.version) ? owesStructured(s) : undefined;
  return owed?.result.structuredContent === undefined ? undefined : owed.schema;
}

const structuredOutput: ExchangeRule = {
  id: 'structured-output',
  group: 'tools',
  severity: 'error',
  versions: STRUCTURED_VERSIONS,
  party: 'server',
  subject: 'exchange',
  summary: 'A tool that declares an outputSchema returned no structuredContent, or structuredContent that does not validate against it',
  source: 'https://modelcontextprotocol.io/specification/2026-07-28/server/tools#output-schema',
  check(s): Report[] {
    const owed = owesStructured(s);
    if (!owed) return [];
    const { tool, schema, result } = owed;
    const fix = `return "structuredContent" that validates against ${quoted(tool)}'s outputSchema (and the same JSON in a text block)`;
    if (result.structuredContent === undefined) {
      return [
        {
          message: `tools/call ${quoted(tool)} declares an outputSchema but its result has no structuredContent`,
          pointer: '/response/result',
          evidence: excerpt(result),
          fix,
        },
      ];
    }
    const verdict = validateArguments(schema, result.structuredContent, s.version);
    if (!verdict || verdict.valid) return [];
    const first = verdict.errors[0];
    return [
      {
        message: `tools/call ${quoted(tool)} returned structuredContent that does not validate against its outputSchema: ${first ? `${first.path || '/'} ${first.message}` : 'invalid'}`,
        pointer: `/response/result/structuredContent${first?.path ?? ''}`,
        evidence: excerpt(result.structuredContent),
        fix,
      },
    ];
  },
};

const MAX_LISTED = 5;

const catalogueDrift: ExchangeRule = {
  id: 'tool-catalogue-drift',
  group: 'tools',
  severity: 'warning',
  versions: ALL,
  party: 'server',
  subject: 'exchange',
  summary: "A tool's definition changed between tools/list answers without notifications/tools/list_changed (a tool-poisoning vector)",
  source:
    'https://modelcontextprotocol.io/specification/2026-07-28/server/tools#list-changed-notification, https://modelcontextprotocol.io/specification/2026-07-28/server/tools#tool',
  check(s): Report[] {
    const answer = answerOf(s, 'result', 'tools/list');
    const before = s.session.previousTools;
    const tools = asRecord(answer?.result)?.tools;
    if (!answer || !before || s.session.listAnnounced || !Array.isArray(tools)) return [];
    const changed: string[] = [];
    const added: string[] = [];
    for (const entry of tools) {
      const name = asRecord(entry)?.name;
      if (typeof name !== 'string') continue;
      const now = s.session.tools.get(name)?.fields;
      const was = before.get(name);
      if (!was) {
        added.push(name);
        continue;
      }
      if (!now) continue;
      const fields = [...new Set([...Object.keys(was), ...Object.keys(now)])].filter((k) => was[k] !== now[k]);
      if (fields.length > 0) changed.push(`${name} (${fields.join(', ')})`);
    }
    // Removals are known only when this answer is the whole list (no cursor in, none out).
    const whole = asRecord(s.request.params)?.cursor === undefined && asRecord(answer.result)?.nextCursor === undefined;
    const listed = new Set(tools.map((t) => asRecord(t)?.name));
    const removed = whole ? [...before.keys()].filter((n) => !listed.has(n)) : [];
    if (changed.length + added.length + removed.length === 0) return [];
    const parts = [
      changed.length
        ? `changed: ${changed.slice(0, MAX_LISTED).join('; ')}${changed.length > MAX_LISTED ? ` +${changed.length - MAX_LISTED}` : ''}`
        : '',
      added.length
        ? `added: ${added.slice(0, MAX_LISTED).join(', ')}${added.length > MAX_LISTED ? ` +${added.length - MAX_LISTED}` : ''}`
        : '',
      removed.length
        ? `removed: ${removed.slice(0, MAX_LISTED).join(', ')}${removed.length > MAX_LISTED ? ` +${removed.length - MAX_LISTED}` : ''}`
        : '',
    ].filter(Boolean);
    return [
      {
        message: `tools/list differs from the previous answer with no notifications/tools/list_changed in between: ${parts.join('; ')}`,
        pointer: '/response/result/tools',
        evidence: excerpt(parts.join('; ')),
        fix: "send notifications/tools/list_changed (and declare tools.listChanged) before a tool's definition changes; clients approve tools by their definitions",
      },
    ];
  },
};

export const TOOL_CATALOGUE_RULES: readonly ExchangeRule[] = [structuredOutput, catalogueDrift];
