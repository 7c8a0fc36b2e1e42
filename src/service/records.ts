/**
 * The store's records and names as the interfaces (src/cli, src/http, src/mcp, src/tools) may
 * name them: the shapes the services take and return, and the few constants that go with them.
 * The interfaces import them from here, never from src/store, so the layers run one way
 * (interfaces → client/service → runtime → store, issue #21) and a change of the store's modules
 * is seen by the services alone.
 */

export { cliActor } from '../store/audit.js';
export { documentKeyString, type StoredDocument, TENANT_PROJECT } from '../store/document-rows.js';
export type { FeedLine } from '../store/feed.js';
export type { SettingRecord, SettingScope } from '../store/settings.js';
export { MAX_ROTATION_GRACE_MS, ROLES, type Role, type TokenRecord, type Tokens } from '../store/tokens.js';
export type { WorkflowRun } from '../store/workflow-runs.js';
