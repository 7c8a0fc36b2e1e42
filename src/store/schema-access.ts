/* The tables of people and access of the store's schema (`src/store/schema.ts`): users, tokens, the audit log. */
import type { Generated } from 'kysely';

/** Users (decisions §2): `createdBy` and `runAs` name them. */
export interface UsersTable {
  tenant: string;
  name: string;
  display_timezone: string | null;
  created_at: number;
}

/** API tokens (decisions §6): bound to a tenant or to all, with a role; only the hash is stored. */
export interface TokensTable {
  id: string;
  tenant: string | null;
  role: string;
  user_name: string;
  label: string | null;
  hash: string;
  created_at: number;
  revoked_at: number | null;
  /** The one project the token reaches; null: every project of its tenant (issue #19). */
  project: string | null;
  /** UTC epoch ms from which the token is refused; null: never. */
  expires_at: number | null;
  /** UTC epoch ms of its latest recorded use (at most one write a minute); null: never used. */
  last_used_at: number | null;
  /** SHA-256 hex of the secret the last rotation replaced, accepted until `previous_until`. */
  previous_hash: string | null;
  /** UTC epoch ms until which `previous_hash` still works; null with it. */
  previous_until: number | null;
}

/**
 * The audit trail (issue #19): one row per attributed action — every document version written,
 * every delete and restore, every fire, stop and refresh — with who did it and through what.
 */
export interface AuditLogTable {
  id: Generated<number>;
  tenant: string;
  project: string;
  at: number;
  /** `document`, `scheduler`, `process`, `workflow-run` or `project`. */
  subject_type: string;
  /** The document path (a delete: where it was deleted from), scheduler name, process or run id; '' for a project. */
  subject: string;
  /** `create`, `update`, `delete`, `restore`, `fire`, `stop` or `refresh`. */
  action: string;
  /** The document's version after the action; null for other subjects. */
  version: number | null;
  /** A delete's or restore's path in `_vance/trash/`. */
  trash_path: string | null;
  user_name: string;
  /** The bearer token's id; null for a local command or Ursa itself. */
  token_id: string | null;
  /** `rest`, `mcp`, `cli`, `library` or `ursa`. */
  interface: string;
  /** 1 when an agent did it (a tool call). */
  agent: number;
  /** JSON: a fire's correlationId, a stop's reason, a refresh's scope. */
  detail: string | null;
}
