// The frameworks a server is built with that mcp-warden can recognise and give fixes for: the
// official SDKs and the frameworks most servers use. `within`: a broader entry whose fix applies
// when this one has none (the TypeScript SDK's transport is the same under McpServer and Server).

export const FRAMEWORK_IDS = [
  'typescript-sdk',
  'typescript-sdk-v1-mcpserver',
  'typescript-sdk-v1-server',
  'typescript-sdk-v2',
  'python-sdk',
  'fastmcp',
  'go-sdk',
  'mcp-go',
  'rmcp',
  'java-sdk',
  'csharp-sdk',
] as const;

export type FrameworkId = (typeof FRAMEWORK_IDS)[number];

export interface FrameworkInfo {
  /** How people name it. */
  label: string;
  /** The broader entry whose fixes apply when this one has none. */
  within?: FrameworkId;
}

export const FRAMEWORKS: Readonly<Record<FrameworkId, FrameworkInfo>> = {
  'typescript-sdk': { label: 'TypeScript SDK (@modelcontextprotocol/sdk v1 or @modelcontextprotocol/server v2)' },
  'typescript-sdk-v1-mcpserver': { label: 'TypeScript SDK v1, McpServer', within: 'typescript-sdk' },
  'typescript-sdk-v1-server': { label: 'TypeScript SDK v1, low-level Server', within: 'typescript-sdk' },
  'typescript-sdk-v2': { label: 'TypeScript SDK v2 (@modelcontextprotocol/server)', within: 'typescript-sdk' },
  'python-sdk': { label: 'Python SDK (mcp: FastMCP / MCPServer, low-level Server)' },
  fastmcp: { label: 'FastMCP (the fastmcp package)' },
  'go-sdk': { label: 'Go SDK (github.com/modelcontextprotocol/go-sdk)' },
  'mcp-go': { label: 'mcp-go (github.com/mark3labs/mcp-go)' },
  rmcp: { label: 'rmcp (the Rust SDK)' },
  'java-sdk': { label: 'Java SDK (io.modelcontextprotocol)' },
  'csharp-sdk': { label: 'C# SDK (ModelContextProtocol)' },
};

/** The framework and the broader ones it is within, most specific first. */
export function lineage(id: FrameworkId): FrameworkId[] {
  const within = FRAMEWORKS[id].within;
  return within ? [id, ...lineage(within)] : [id];
}
