// The fixes that differ per framework, shared by the explanations of several rules. Every fact is
// read in the framework's source at the version `source` names.
import type { FrameworkFix } from './types.ts';
import type { FrameworkId } from '../../frameworks/frameworks.ts';

type Fixes = Partial<Record<FrameworkId, FrameworkFix>>;

const KEEP_UNKNOWN_TOOL_RIGHT =
  'mcp-warden puts it right on the wire: answers.unknownTool: spec (the default) with unknown-tool: rewrite under mode: enforce (as config/enforce.yaml has) answers the client with -32602; or answers.unknownTool: iserror to accept the result, as SEP-2145 (open) proposes';

const TS_LOW_LEVEL_UNKNOWN_TOOL: FrameworkFix = {
  fix: 'The low-level Server sends the code your handler throws: check the name first and throw McpError(ErrorCode.InvalidParams, ...) for a tool you do not have.',
  snippet: `server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const tool = tools.get(request.params.name);
  if (!tool) throw new McpError(ErrorCode.InvalidParams, \`Unknown tool: \${request.params.name}\`);
  return tool.run(request.params.arguments);
});`,
  source: '@modelcontextprotocol/sdk 1.32.2, src/shared/protocol.ts (an error with an integer code is sent with that code)',
};

export const UNKNOWN_TOOL_FRAMEWORKS: Fixes = {
  'typescript-sdk-v1-mcpserver': {
    fix: 'McpServer does it, not your code: its tools/call handler throws McpError(-32602, \'Tool NAME not found\') inside the try that turns every error into an isError result, so the client gets isError "MCP error -32602: Tool NAME not found".',
    sdk: {
      fixedIn: '@modelcontextprotocol/server 2.0.0 (McpServer in v2 throws the -32602 before that try)',
      meanwhile: KEEP_UNKNOWN_TOOL_RIGHT,
    },
    source:
      '@modelcontextprotocol/sdk 1.32.2 src/server/mcp.ts (tools/call handler, createToolError); typescript-sdk 3924de9 packages/server/src/server/mcp.ts',
  },
  'typescript-sdk-v1-server': TS_LOW_LEVEL_UNKNOWN_TOOL,
  'python-sdk': {
    fix: 'The SDK does it: FastMCP (mcp 1.x) and MCPServer (2.0) raise ToolError("Unknown tool: NAME") and turn it into an isError result.',
    sdk: { issue: 'modelcontextprotocol/python-sdk#1149 (open)', meanwhile: KEEP_UNKNOWN_TOOL_RIGHT },
    source:
      'python-sdk v1.29.0 src/mcp/server/lowlevel/server.py (call_tool: except Exception -> isError); v2.0.0 src/mcp/server/mcpserver/tools/tool_manager.py, mcpserver/server.py',
  },
  fastmcp: {
    fix: 'FastMCP does it on purpose: an unknown or disabled tool is answered with isError "Unknown tool: \'NAME\'".',
    sdk: { meanwhile: KEEP_UNKNOWN_TOOL_RIGHT },
    source: 'PrefectHQ/fastmcp 743ddff (4.0 beta) fastmcp/server/mixins/mcp_operations.py (_on_call_tool)',
  },
};

export const UNKNOWN_TOOL_CODE_FRAMEWORKS: Fixes = { 'typescript-sdk-v1-server': TS_LOW_LEVEL_UNKNOWN_TOOL };

const LOG_AND_SAY = 'log the error with its detail, and answer with a short message of your own';

/** A failure's text reaches the client as the tool raised it: where each framework takes it from. */
export const LEAK_FRAMEWORKS: Fixes = {
  'typescript-sdk': {
    fix: `McpServer sends a thrown Error's message as the isError text word for word (createToolError(error.message)), and the low-level Server as the JSON-RPC error's message: catch in the tool callback, ${LOG_AND_SAY}.`,
    snippet: `server.registerTool('lookup_user', { inputSchema: { id: z.string() } }, async ({ id }) => {
  try {
    return await lookupUser(id);
  } catch (err) {
    logger.error({ err, id }, 'lookup_user failed');
    return { content: [{ type: 'text', text: 'User lookup failed; try again later' }], isError: true };
  }
});`,
    source:
      '@modelcontextprotocol/sdk 1.32.2 src/server/mcp.ts (tools/call catch), src/shared/protocol.ts (error.message); typescript-sdk 3924de9 packages/server/src/server/mcp.ts',
  },
  'python-sdk': {
    fix: `An exception's str(e) becomes the isError text (the low-level Server, FastMCP and MCPServer alike): catch it in the tool, ${LOG_AND_SAY} (raise ToolError with it).`,
    snippet: `@mcp.tool()
def lookup_user(id: str) -> str:
    try:
        return users.lookup(id)
    except Exception:
        logger.exception("lookup_user failed")
        raise ToolError("User lookup failed; try again later")`,
    source:
      'python-sdk v1.29.0 src/mcp/server/lowlevel/server.py (call_tool); v2.0.0 src/mcp/server/mcpserver/server.py (_handle_call_tool)',
  },
  fastmcp: {
    fix: 'Construct the server with mask_error_details=True: an unexpected exception then reaches the client as "Error calling tool \'NAME\'" only; raise ToolError for what the model should read.',
    snippet: 'mcp = FastMCP("users", mask_error_details=True)',
    source: 'PrefectHQ/fastmcp 743ddff fastmcp/server/server.py (call_tool masking)',
  },
  'go-sdk': {
    fix: `An error a typed tool handler returns becomes the isError text (SetError(err)): ${LOG_AND_SAY}.`,
    snippet: `func lookupUser(ctx context.Context, req *mcp.CallToolRequest, in Input) (*mcp.CallToolResult, Output, error) {
	user, err := users.Lookup(ctx, in.ID)
	if err != nil {
		slog.Error("lookup_user failed", "err", err)
		return nil, Output{}, errors.New("user lookup failed; try again later")
	}
	return nil, Output{Name: user.Name}, nil
}`,
    source: 'modelcontextprotocol/go-sdk 3d6450f mcp/server.go (typed handler: SetError)',
  },
  'mcp-go': {
    fix: `An error a tool handler returns becomes a JSON-RPC -32603 error whose message is err.Error(): ${LOG_AND_SAY} as mcp.NewToolResultError(...), nil.`,
    snippet: `user, err := users.Lookup(ctx, id)
if err != nil {
	log.Printf("lookup_user: %v", err)
	return mcp.NewToolResultError("user lookup failed; try again later"), nil
}`,
    source: 'mark3labs/mcp-go 56af04b server/server.go (handleToolCall), mcp/utils.go (NewToolResultError)',
  },
  'csharp-sdk': {
    fix: "Only an McpException's message reaches the client (\"An error occurred invoking 'NAME': MESSAGE\"); other exceptions are hidden. Keep paths, hosts and traces out of the McpException messages you throw.",
    source: 'modelcontextprotocol/csharp-sdk 609499b src/ModelContextProtocol.Core/Server/McpServerImpl.cs (CreateToolCallErrorResult)',
  },
};

export const TRANSPORT_CODE_FRAMEWORKS: Fixes = {
  'typescript-sdk': {
    fix: "The SDK's Streamable HTTP transport sends these -32000 bodies itself (400 for an unsupported MCP-Protocol-Version, 406 for a bad Accept, 400 for a missing session); the HTTP status is right and carries the meaning.",
    sdk: {
      meanwhile:
        'nothing to change in your code; the finding is a warning. Scope legacy-range-code off for these answers in the policy, or let config/enforce.yaml (legacy-range-code: rewrite) put a defined code in the body it judges',
    },
    source:
      '@modelcontextprotocol/sdk 1.32.2 src/server/webStandardStreamableHttp.ts (createJsonErrorResponse(..., -32000, ...)); the same in typescript-sdk 3924de9 packages/server/src/server/streamableHttp.ts',
  },
};

export const SILENT_SUCCESS_FRAMEWORKS: Fixes = {
  'typescript-sdk': {
    fix: 'Return the failure with isError: true from the tool callback (or throw: McpServer turns a thrown error into an isError result).',
    snippet: `if (!sent) return { content: [{ type: 'text', text: 'Sending failed: the mail server refused the connection' }], isError: true };`,
    source: '@modelcontextprotocol/sdk 1.32.2 src/server/mcp.ts (createToolError)',
  },
  'python-sdk': {
    fix: 'Raise ToolError (or any exception) from the tool instead of returning the failure as text: the SDK answers it with isError: true.',
    snippet: 'raise ToolError("Sending failed: the mail server refused the connection")',
    source: 'python-sdk v1.29.0 src/mcp/server/lowlevel/server.py (call_tool); v2.0.0 src/mcp/server/mcpserver/server.py',
  },
};

export const HTML_ERROR_PAGE_FRAMEWORKS: Fixes = {
  'typescript-sdk': {
    fix: "Your web framework answered, not the SDK: an error thrown outside the transport (in middleware, or before handleRequest) gets Express's HTML error page. Add an error handler after the MCP route that answers JSON-RPC.",
    snippet: `app.use((err, req, res, next) => {
  logger.error({ err }, 'MCP request failed');
  if (res.headersSent) return next(err);
  res.status(500).json({ jsonrpc: '2.0', id: req.body?.id ?? null, error: { code: -32603, message: 'Internal error' } });
});`,
    source: 'express 5 (the default error handler sends an HTML page); the SDK transport answers its own errors as JSON',
  },
};
