import type { Generated } from 'kysely';
import type { AuditLogTable, TokensTable, UsersTable } from './schema-access.js';
import type { AgentRunsTable } from './schema-agents.js';
import type { WorkflowRunsTable, WorkflowStepsTable } from './schema-workflows.js';

export type { AuditLogTable, TokensTable, UsersTable } from './schema-access.js';

/**
 * The tables of Ursa's store, as Kysely sees them. Instants are UTC epoch milliseconds in
 * integer columns on every dialect (a `timestamptz` loses the JavaScript value's identity in a
 * compare-and-swap); booleans are 0/1 integers; JSON is text.
 */

/** Document layer (decisions §2): one row per live document, keyed by (tenant, project, path). */
export interface DocumentsTable {
  id: Generated<number>;
  tenant: string;
  project: string;
  path: string;
  body: string;
  created_by: string;
  /** 1 on creation, +1 on every replaced body. */
  version: number;
  created_at: number;
  updated_at: number;
  /** The sweeper deletes the row after this instant (run logs, spec §9a TTL); null = keep. */
  expires_at: number | null;
  /** For a document in `_vance/trash/`: the path it was trashed from (restore puts it back there). */
  trashed_from: string | null;
}

/** Every replaced or deleted document body, kept (spec §9 "auto-archived by the Document Layer"). */
export interface DocumentArchiveTable {
  id: Generated<number>;
  tenant: string;
  project: string;
  path: string;
  version: number;
  body: string;
  created_by: string;
  archived_at: number;
  /** `replaced` or `trashed` (moved to `_vance/trash/`). */
  reason: string;
}

/**
 * The last fencing token each scheduler's attempts took (decisions §5, `src/store/fencing.ts`);
 * kept when the scheduler is deleted, so that one made again under its name goes on from there.
 */
export interface SchedulerFencingTable {
  tenant: string;
  project: string;
  name: string;
  last_token: number | string;
}

/** Persisted schedule state per effective scheduler (decisions §4). */
export interface ScheduleStateTable {
  tenant: string;
  project: string;
  name: string;
  /** Where the definition came from: `project` or `tenant` (spec §3). */
  source: string;
  /** Version of the scheduler document the state was computed from. */
  document_version: number;
  /** The occurrence the scheduler waits for; null when it will not fire (disabled, fired one-shot). */
  next_run_at: number | null;
  /** The last occurrence claimed. */
  last_scheduled_at: number | null;
  updated_at: number;
  /** What `next_run_at` was computed from (trigger, zone, enabled), so a refresh that changes nothing else keeps it. */
  timing: string | null;
  /** The scheduler's slot (`slotOf` of its key, decisions/partition.ts): which worker claims it (issue #24). Defaults to 0 on insert. */
  slot: Generated<number>;
}

/** One row per claimed occurrence (decisions §4): unique on (tenant, project, name, scheduled_for). */
export interface RunsTable {
  /** `run_<uuid>`; the feed's traceId. */
  correlation_id: string;
  tenant: string;
  project: string;
  name: string;
  scheduled_for: number;
  /** `cron`, `at` or `manual`. */
  trigger: string;
  /** 1 when later occurrences were already due at the claim and this run absorbed them (decisions §4). */
  coalesced: number;
  /** The newest absorbed occurrence, when coalesced. */
  coalesced_until: number | null;
  claimed_at: number;
  /** `claimed` → (`queued` →) `started` → `ended`, or `skipped`. */
  state: string;
  /**
   * Spec §9a outcome: pending | completed | failed | cancelled | skipped_overlap |
   * skipped_overlap_queued | skipped_misfire | skipped_deleted | skipped_disabled (a scheduler
   * deleted or disabled before the run's instant or while it waited in its queue, issue #20) |
   * skipped_bounds (its scheduler's startAt, endAt or maxRuns, issue #22) | skipped_budget (its
   * project's run budget, issue #22).
   */
  outcome: string;
  reason: string | null;
  run_as: string;
  session_id: string | null;
  process_id: string | null;
  log_path: string;
  started_at: number | null;
  ended_at: number | null;
  /** The worker that claimed the run and runs it; its heartbeat is the run's lease (decisions §5). */
  worker_id: string | null;
  /** The scheduler's `lockMode` when the run was claimed: `full`, `protected` or `hidden` (spec §10b). */
  lock_mode: string;
  /** How many times the run was started (its attempts); 0 until its first start. */
  attempt: number;
  /**
   * The fencing token of the run's latest attempt, assigned by the transaction that started it;
   * null before the first start (see `src/store/fencing.ts`).
   */
  fencing_token: number | null;
  /** When the run began to wait in its lane (overlap `queue` or `cancelPrevious`), UTC ms; null if it never waited. */
  queued_at: number | null;
  /** The lane's active run it waited behind (its correlation id). */
  waiting_behind: string | null;
  /** The lane's waiting run this one was folded into (outcome `skipped_overlap_queued`). */
  folded_into: string | null;
}

/** Sessions (spec §6). */
export interface SessionsTable {
  id: string;
  tenant: string;
  project: string;
  name: string;
  owner_user: string;
  system: number;
  /** `idle` or `archived`. */
  status: string;
  created_at: number;
  /** For a scheduler's system session: the scheduler, and the version (1, 2, … on each runAs change). */
  scheduler: string | null;
  version: number | null;
}

/** Processes (spec §4.1, decisions §2). */
export interface ProcessesTable {
  id: string;
  tenant: string;
  project: string;
  session_id: string;
  recipe: string;
  engine: string;
  /** ready | running | paused | blocked | suspended | done | stopped | failed */
  status: string;
  owner_user: string;
  /** JSON: {source, scheduledFor, correlationId, trigger}. */
  trigger_origin: string;
  params: string;
  initial_message: string | null;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
  exit_code: number | null;
  reason: string | null;
  output_tail: string | null;
  error_tail: string | null;
  /** Set by `processStop` on any worker; the worker running the process stops it (spec §5). */
  stop_requested_at: number | null;
  stop_reason: string | null;
}

/** Inbox items for a user (decisions §2): failed runs, late one-shots, invalid documents, agent runs' questions. */
export interface InboxTable {
  id: Generated<number>;
  tenant: string;
  user_name: string;
  created_at: number;
  /** `run-failed`, `one-shot-late`, `one-shot-refused`, `document-invalid`, `scheduler-paused`, `budget-exceeded`, `question` (issue #25). */
  kind: string;
  title: string;
  body: string;
  project: string | null;
  scheduler: string | null;
  correlation_id: string | null;
  log_path: string | null;
  read_at: number | null;
  /** A `question` item's answer, who gave it, when, and when it reached the agent service (issue #25). */
  answer: string | null;
  answered_by: string | null;
  answered_at: number | null;
  answer_delivered_at: number | null;
  /** A question's asker: its agent run's credential fencing token; the answer goes to that service run only. */
  asked_fencing_token: number | null;
  /** Failed deliveries of the answer so far, and when the next may go (backoff; null: at once). */
  answer_tries: Generated<number>;
  next_answer_at: number | null;
}

/** Activity feed (spec §7): START/END lines per run, and lines for skipped or coalesced occurrences. */
export interface FeedTable {
  id: Generated<number>;
  tenant: string;
  project: string;
  at: number;
  /** `START`, `END`, `SKIPPED`, or `AGENT` (an agent service's callback, issue #25). */
  kind: string;
  ref_type: string;
  ref_id: string;
  trace_id: string;
  outcome: string;
  log_path: string | null;
  /** JSON with the details of the line. */
  payload: string;
}

/** Workers of a store (decisions §5): a live worker renews `heartbeat_at`; that is the lease of its runs. */
export interface WorkersTable {
  id: string;
  host: string;
  pid: number;
  started_at: number;
  heartbeat_at: number;
  stopped_at: number | null;
  /** The identity of the store the worker registered on (`store_identity`, issue #26). */
  store_id: string | null;
}

/**
 * The one serving process of a SQLite store (decisions §5): at most one row (`slot` 1), naming the
 * worker whose lease (its `workers.heartbeat_at`) holds the store. Empty on PostgreSQL.
 */
export interface StoreOwnerTable {
  slot: number;
  worker_id: string;
  /** When it took the store, UTC epoch ms. */
  since: number;
}

/**
 * The OS process groups workers started (decisions §5 fencing), to end what a dead worker left
 * running on its host. A row is deleted once its run's engine returned; a leftover ended by a later
 * worker keeps its row, with `ended_at` and `ending`. Instants are UTC epoch ms.
 */
export interface ProcessGroupsTable {
  /** The Ursa process (`proc_…`) whose engine started the group. */
  process_id: string;
  /** The group id: the pid of its leader. */
  pgid: number;
  worker_id: string;
  host: string;
  /** `/proc/sys/kernel/random/boot_id`; null where there is none. */
  boot_id: string | null;
  /** `readlink /proc/self/ns/pid`; null where there is none. */
  pid_namespace: string | null;
  /** The leader's start time, clock ticks since boot; null where it could not be read. */
  leader_start_ticks: number | null;
  recorded_at: number;
  ended_at: number | null;
  /** How a leftover was ended: `ended`, `survived`, `gone`, `reused` or `unverified`. */
  ending: string | null;
  /** The identity of the store whose worker recorded the group (`store_identity`, issue #26). */
  store_id: string | null;
}

/**
 * The store's own identity (issue #26): one row, made when the store is created and never copied,
 * so that a copy of a store is another store and ends only the process groups it recorded itself.
 */
export interface StoreIdentityTable {
  slot: number;
  /** `store_<uuid>`. */
  store_id: string;
  /** UTC epoch ms. */
  created_at: number;
}

/** Settings (decisions §2): `display.timezone`, `scheduler.log.retentionDays`, `feed.retentionDays`, `lifecycleType`. */
export interface SettingsTable {
  tenant: string;
  /** `user`, `tenant` or `project`. */
  scope: string;
  /** The user or project the setting belongs to; '' for the tenant. */
  subject: string;
  key: string;
  /** The value as text (numbers in decimal). */
  value: string;
  updated_at: number;
}

/** Projects an operator suspended (spec §3): a suspended project is not active, whatever it holds. */
export interface ProjectsTable {
  tenant: string;
  project: string;
  suspended: number;
  updated_at: number;
}

/** The one-shot fired marker (spec §10a): written after a successful spawn, before the document goes to the trash. */
export interface OneShotFiresTable {
  tenant: string;
  project: string;
  name: string;
  /** The consumed `at:` instant, UTC epoch ms. */
  at: number;
  correlation_id: string;
  fired_at: number;
}

/**
 * When Ursa first knew a `_tenant` one-shot for one `at:` instant (decisions §5): it falls due at
 * the later of the two, and a project that takes it up after that never runs it.
 */
export interface TenantOneShotsTable {
  tenant: string;
  name: string;
  /** The `at:` instant, UTC epoch ms. */
  at: number;
  /** UTC epoch ms. */
  known_at: number;
}

/** A paused scheduler's note, by its document (issue #22; `store/pauses.ts`). `paused_at`: UTC ms. */
export interface SchedulerPausesTable {
  tenant: string;
  project: string;
  path: string;
  note: string;
  paused_by: string;
  paused_at: number;
}

/**
 * An earlier attempt of a run that was retried (issue #22): written when its next attempt starts,
 * so that the run's row keeps its latest attempt and these the ones before. Instants are UTC ms.
 */
export interface RunAttemptsTable {
  correlation_id: string;
  /** 1 for the run's first start, then 2, 3, … */
  attempt: number;
  tenant: string;
  project: string;
  process_id: string | null;
  started_at: number;
  ended_at: number | null;
  reason: string | null;
}

export interface Database {
  documents: DocumentsTable;
  document_archive: DocumentArchiveTable;
  schedule_state: ScheduleStateTable;
  scheduler_fencing: SchedulerFencingTable;
  runs: RunsTable;
  run_attempts: RunAttemptsTable;
  sessions: SessionsTable;
  processes: ProcessesTable;
  feed: FeedTable;
  users: UsersTable;
  workers: WorkersTable;
  store_owner: StoreOwnerTable;
  store_identity: StoreIdentityTable;
  process_groups: ProcessGroupsTable;
  inbox: InboxTable;
  settings: SettingsTable;
  projects: ProjectsTable;
  oneshot_fires: OneShotFiresTable;
  tenant_oneshots: TenantOneShotsTable;
  scheduler_pauses: SchedulerPausesTable;
  tokens: TokensTable;
  workflow_runs: WorkflowRunsTable;
  workflow_steps: WorkflowStepsTable;
  audit_log: AuditLogTable;
  agent_runs: AgentRunsTable;
}
