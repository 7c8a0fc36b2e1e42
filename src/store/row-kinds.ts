import type { Insertable, Selectable } from 'kysely';
import type { DocumentsTable, FeedTable, ProcessesTable, RunsTable } from './schema.js';
import type { ColumnKinds } from './values.js';

/*
 * The columns of the rows a run writes in bulk (its claim, its start, its end: issue #24), as
 * `insertRows` sends them. Exhaustive by their types: a column added to a table must be added here.
 */

/** A run's row as its claim inserts it, every column. */
export const RUN_COLUMNS: ColumnKinds<Selectable<RunsTable>> = {
  correlation_id: 'text',
  tenant: 'text',
  project: 'text',
  name: 'text',
  scheduled_for: 'bigint',
  trigger: 'text',
  coalesced: 'bigint',
  coalesced_until: 'bigint',
  claimed_at: 'bigint',
  state: 'text',
  outcome: 'text',
  reason: 'text',
  run_as: 'text',
  session_id: 'text',
  process_id: 'text',
  log_path: 'text',
  started_at: 'bigint',
  ended_at: 'bigint',
  worker_id: 'text',
  lock_mode: 'text',
  attempt: 'bigint',
  fencing_token: 'bigint',
  queued_at: 'bigint',
  waiting_behind: 'text',
  folded_into: 'text',
};

/** A feed line, every column but its generated id. */
export const FEED_COLUMNS: ColumnKinds<Omit<Insertable<FeedTable>, 'id'>> = {
  tenant: 'text',
  project: 'text',
  at: 'bigint',
  kind: 'text',
  ref_type: 'text',
  ref_id: 'text',
  trace_id: 'text',
  outcome: 'text',
  log_path: 'text',
  payload: 'text',
};

/** A process row, every column. */
export const PROCESS_COLUMNS: ColumnKinds<Insertable<ProcessesTable>> = {
  id: 'text',
  tenant: 'text',
  project: 'text',
  session_id: 'text',
  recipe: 'text',
  engine: 'text',
  status: 'text',
  owner_user: 'text',
  trigger_origin: 'text',
  params: 'text',
  initial_message: 'text',
  created_at: 'bigint',
  started_at: 'bigint',
  ended_at: 'bigint',
  exit_code: 'bigint',
  reason: 'text',
  output_tail: 'text',
  error_tail: 'text',
  stop_requested_at: 'bigint',
  stop_reason: 'text',
};

/** A document row, every column but its generated id. */
export const DOCUMENT_COLUMNS: ColumnKinds<Omit<Insertable<DocumentsTable>, 'id'>> = {
  tenant: 'text',
  project: 'text',
  path: 'text',
  body: 'text',
  created_by: 'text',
  version: 'bigint',
  created_at: 'bigint',
  updated_at: 'bigint',
  expires_at: 'bigint',
  trashed_from: 'text',
};
