// What built a server, told from what the proxy (or check) sees of it: its serverInfo, and the
// shapes of its answers, above all to a tools/call of a tool it does not have and to a request its
// transport turns away. Each sign says which framework writes it, read in that framework's source
// (docs/rules.md, "Fixes in your framework", names the versions); a sign only one framework writes
// is `high`, one a framework's users (or another framework) could write too is `medium`. Pure.
import type { Message } from '../codec/jsonrpc.ts';
import type { FrameworkId } from './frameworks.ts';

export type Confidence = 'high' | 'medium' | 'low';

export interface Recognition {
  framework: FrameworkId;
  confidence: Confidence;
  /** The sign it was told by, for people. */
  because: string;
}

/** What the server said of itself in initialize (or server/discover). */
export interface ServerInfo {
  name?: string;
  version?: string;
}

type Answer = Extract<Message, { kind: 'result' | 'error' }>;

interface Sign {
  framework: FrameworkId;
  confidence: Confidence;
  because: string;
  matches(a: Answer): boolean;
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The text of an isError result's first text block. */
function isErrorText(a: Answer): string {
  if (a.kind !== 'result') return '';
  const r = a.result as { isError?: unknown; content?: unknown } | null;
  if (r === null || typeof r !== 'object' || r.isError !== true || !Array.isArray(r.content)) return '';
  const first = r.content[0] as { text?: unknown } | undefined;
  return text(first?.text);
}

const errorText = (a: Answer, code: number): string => (a.kind === 'error' && a.code === code ? text(a.message) : '');

const SIGNS: readonly Sign[] = [
  {
    framework: 'typescript-sdk-v1-mcpserver',
    confidence: 'high',
    because: 'an unknown tool answered with isError "MCP error -32602: Tool NAME not found" (McpServer folds its own -32602 into a result)',
    matches: (a) => /^MCP error -32602: Tool .+ not found$/.test(isErrorText(a)),
  },
  {
    framework: 'typescript-sdk-v2',
    confidence: 'medium',
    because: 'an unknown tool answered with error -32602 "Tool NAME not found"',
    matches: (a) => /^(MCP error -32602: )?Tool .+ not found$/.test(errorText(a, -32602)),
  },
  {
    framework: 'typescript-sdk',
    confidence: 'medium',
    because: 'a request turned away by the TypeScript SDK\'s Streamable HTTP transport (-32000 "Bad Request: ..." / "Not Acceptable: ...")',
    matches: (a) =>
      /^(Bad Request: (Unsupported protocol version|Server not initialized|Mcp-Session-Id header is required)|Not Acceptable: Client must accept )/.test(
        errorText(a, -32000),
      ),
  },
  {
    framework: 'fastmcp',
    confidence: 'high',
    because: 'an unknown tool answered with isError "Unknown tool: \'NAME\'"',
    matches: (a) => /^Unknown tool: '.+'$/.test(isErrorText(a)),
  },
  {
    framework: 'python-sdk',
    confidence: 'high',
    because: 'an unknown tool answered with isError "Unknown tool: NAME" (FastMCP / MCPServer fold their ToolError into a result)',
    matches: (a) => /^Unknown tool: [^'].*$/.test(isErrorText(a)),
  },
  {
    framework: 'csharp-sdk',
    confidence: 'high',
    because:
      'an unknown tool answered with error -32602 "Unknown tool: \'NAME\'", or a tool failure as "An error occurred invoking \'NAME\'"',
    matches: (a) => /^Unknown tool: '.+'$/.test(errorText(a, -32602)) || /^An error occurred invoking '.+'/.test(isErrorText(a)),
  },
  {
    framework: 'java-sdk',
    confidence: 'high',
    because: 'an unknown tool answered with error -32602 "Unknown tool: invalid_tool_name", the name of the spec\'s example',
    matches: (a) => errorText(a, -32602) === 'Unknown tool: invalid_tool_name',
  },
  {
    framework: 'go-sdk',
    confidence: 'high',
    because: 'an unknown tool answered with error -32602 \'unknown tool "NAME"\'',
    matches: (a) => /^unknown tool ".+"$/.test(errorText(a, -32602)),
  },
  {
    framework: 'mcp-go',
    confidence: 'high',
    because: 'an unknown tool answered with error -32602 "tool \'NAME\' not found"',
    matches: (a) => /^tool '.+' not found/.test(errorText(a, -32602)),
  },
  {
    framework: 'rmcp',
    confidence: 'medium',
    because: 'an unknown tool answered with error -32602 "tool not found"',
    matches: (a) => errorText(a, -32602) === 'tool not found',
  },
];

/** The names frameworks give a server that names none. */
const NAME_SIGNS: ReadonlyArray<Omit<Sign, 'matches'> & { matches(info: ServerInfo): boolean }> = [
  {
    framework: 'rmcp',
    confidence: 'high',
    because: 'serverInfo.name "rmcp" (rmcp\'s default Implementation)',
    matches: (i) => i.name === 'rmcp',
  },
  {
    framework: 'fastmcp',
    confidence: 'high',
    because: 'serverInfo.name "FastMCP-" and four hex digits (FastMCP\'s generated default)',
    matches: (i) => /^FastMCP-[0-9a-f]{4}$/.test(i.name ?? ''),
  },
  {
    framework: 'python-sdk',
    confidence: 'medium',
    because: 'serverInfo.name "FastMCP" (the default of the Python SDK\'s FastMCP)',
    matches: (i) => i.name === 'FastMCP',
  },
  {
    framework: 'java-sdk',
    confidence: 'high',
    because: 'serverInfo.name "Java SDK MCP Server" (its default)',
    matches: (i) => i.name === 'Java SDK MCP Server',
  },
];

/** Every sign, as docs/rules.md lists them: the framework, how sure, what tells it. */
export const SIGN_LIST: ReadonlyArray<Omit<Sign, 'matches'>> = [...SIGNS, ...NAME_SIGNS].map(({ framework, confidence, because }) => ({
  framework,
  confidence,
  because,
}));

const recognition = ({ framework, confidence, because }: Omit<Sign, 'matches'>): Recognition => ({ framework, confidence, because });

const RANK: Readonly<Record<Confidence, number>> = { high: 3, medium: 2, low: 1 };

/** The framework told by the strongest sign among `answers` and `info`; undefined when none tells. */
export function recognizeFramework(info: ServerInfo | undefined, answers: Iterable<Message>): Recognition | undefined {
  const named = info && NAME_SIGNS.find((n) => n.matches(info));
  let best = named ? recognition(named) : undefined;
  for (const a of answers) {
    if (a.kind !== 'result' && a.kind !== 'error') continue;
    for (const s of SIGNS) {
      if ((!best || RANK[s.confidence] > RANK[best.confidence]) && s.matches(a)) best = recognition(s);
    }
  }
  return best;
}

/** Whether `next` tells more than `known`: a stronger sign, or a more specific framework of the same strength. */
export const tellsMore = (known: Recognition | undefined, next: Recognition | undefined): next is Recognition =>
  next !== undefined && (known === undefined || RANK[next.confidence] > RANK[known.confidence]);
