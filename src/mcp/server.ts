import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Runtime } from '../runtime/context.js';
import { type AgentIdentity, callTool, toolsFor } from '../tools/toolset.js';
import { MCP_INSTRUCTIONS } from './instructions.js';

/**
 * An MCP server (Model Context Protocol) exposing Ursa's agent tools (spec §9, issue #8) to one
 * identity: the `default` toolset, plus the `admin` one for admins (only the read-only tools with
 * `readOnly`, for a `read` token). Every failure is a tool result with `isError` and a message
 * saying what to change — never a transport failure.
 */
export function createMcpServer(
  rt: Runtime,
  identity: AgentIdentity,
  options: { admin: boolean; readOnly?: boolean },
): McpServer {
  const server = new McpServer({ name: 'ursa', version: '0.1.0' }, { instructions: MCP_INSTRUCTIONS });
  const tools = toolsFor(options.admin, options.readOnly ?? false);
  for (const tool of tools) {
    server.registerTool(
      tool.name,
      {
        description: tool.description,
        inputSchema: tool.input,
        outputSchema: tool.output,
        annotations: { readOnlyHint: tool.label === 'read-only' },
      },
      async (input: unknown) => {
        const result = await callTool(rt, identity, tools, tool.name, input);
        if (!result.ok) {
          return {
            isError: true,
            content: [{ type: 'text' as const, text: `${result.error.code}: ${result.error.message}` }],
          };
        }
        const output = result.output as Record<string, unknown>;
        return {
          content: [{ type: 'text' as const, text: JSON.stringify(output) }],
          structuredContent: output,
        };
      },
    );
  }
  return server;
}
