/** Ursa's library API. See README.md; the cron engine is also available as `ursa/cron`. */
export * from './cron/index.js';
export * from './engines/index.js';
export * from './errors/index.js';
export { createMcpServer } from './mcp/server.js';
export * from './recipes/index.js';
export * from './scheduler/index.js';
export * from './time/index.js';
export {
  type AgentIdentity,
  type AnyTool,
  callTool,
  TOOLS,
  type ToolResult,
  toolsFor,
} from './tools/toolset.js';
export {
  createUrsa,
  type EngineFunction,
  type EngineOutcome,
  type ProcessContext,
  type Scope,
  type Ursa,
  type UrsaOptions,
} from './ursa.js';
