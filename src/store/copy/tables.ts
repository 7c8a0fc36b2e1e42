import type { Database } from '../schema.js';
import { COUNTER_TABLES } from './counters.js';

/**
 * What a store copy (`ursa store copy`, `ursa restore`, issue #26) does with each table of the
 * store. Typed over {@link Database}: a table added to the schema does not compile until it is
 * classified here.
 *
 * - `copy`: the store's contents, copied row for row and verified.
 * - `local`: about this store itself, never copied: its identity (a copy is another store, and
 *   ends only the process groups it recorded itself), and the process that serves it (SQLite).
 */
export const TABLE_ROLES: Readonly<Record<keyof Database, 'copy' | 'local'>> = {
  documents: 'copy',
  document_archive: 'copy',
  schedule_state: 'copy',
  scheduler_fencing: 'copy',
  runs: 'copy',
  run_attempts: 'copy',
  sessions: 'copy',
  processes: 'copy',
  feed: 'copy',
  users: 'copy',
  workers: 'copy',
  store_owner: 'local',
  store_identity: 'local',
  process_groups: 'copy',
  inbox: 'copy',
  settings: 'copy',
  projects: 'copy',
  oneshot_fires: 'copy',
  tenant_oneshots: 'copy',
  scheduler_pauses: 'copy',
  tokens: 'copy',
  workflow_runs: 'copy',
  workflow_steps: 'copy',
  audit_log: 'copy',
  agent_runs: 'copy',
};

/** Kysely's own bookkeeping of applied migrations: compared, never copied (the target migrates itself). */
export const MIGRATION_TABLES: readonly string[] = ['kysely_migration', 'kysely_migration_lock'];

/** The tables a copy carries, sorted by name. */
export const COPIED_TABLES: readonly (keyof Database)[] = (Object.keys(TABLE_ROLES) as (keyof Database)[])
  .filter((table) => TABLE_ROLES[table] === 'copy')
  .sort();

/**
 * Whether a copy knows `table`: one of {@link TABLE_ROLES}, {@link MIGRATION_TABLES}, or a counter
 * carried by value (`COUNTER_TABLES`).
 */
export function isKnownTable(table: string): boolean {
  return (
    Object.hasOwn(TABLE_ROLES, table) || MIGRATION_TABLES.includes(table) || COUNTER_TABLES.includes(table)
  );
}
