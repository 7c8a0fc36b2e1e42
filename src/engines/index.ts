/**
 * Engines run the processes schedulers fire (decisions §2): the `Engine` interface, the built-in
 * `shell`, `noop`, `http` and `agent` engines, and the registry a worker looks engines up in.
 */

export {
  AGENT_START_TIMEOUT_MS,
  type AgentRunPayload,
  agentRunPayload,
  createAgentEngine,
} from './agent.js';
export type { Engine, EngineRequest, EngineResult } from './engine.js';
export {
  createHttpEngine,
  HTTP_DEFAULT_TIMEOUT_MS,
  type HttpEngineOptions,
  type HttpRunPayload,
  httpRunPayload,
  type IdempotencyKeyParts,
  idempotencyKey,
} from './http.js';
export { noopEngine } from './noop.js';
export { type HostLookup, OutboundRefused } from './outbound-connect.js';
export { type DefaultEnginesOptions, defaultEngines, EngineRegistry } from './registry.js';
export {
  createShellEngine,
  paramEnvName,
  SHELL_BASE_ENV,
  type ShellEngineOptions,
  shellEnvironment,
} from './shell.js';
