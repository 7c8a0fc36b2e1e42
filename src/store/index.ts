export {
  type AgentRunOpening,
  type AgentRunRecord,
  type AgentRunStop,
  AgentRuns,
  type AgentServiceStatus,
  credentialMatches,
  hashCredential,
} from './agent-runs.js';
export {
  type Actor,
  type ActorInterface,
  Audit,
  type AuditAction,
  type AuditEntry,
  type AuditRecord,
  type AuditSubject,
  cliActor,
  libraryActor,
  URSA_ACTOR,
} from './audit.js';
export type { PutOptions } from './document-put.js';
export { type DocumentKey, type StoredDocument, TENANT_PROJECT } from './document-rows.js';
export { TRASH_PREFIX } from './document-trash.js';
export { checkWrite, type WriteGuard } from './document-versions.js';
export { Documents } from './documents.js';
export { NOT_SERVING } from './errors.js';
export {
  checkLimit,
  Feed,
  type FeedLine,
} from './feed.js';
export {
  INBOX_KINDS,
  Inbox,
  type InboxItem,
  type InboxKind,
  type InboxListOptions,
  type NewInboxItem,
} from './inbox.js';
export { type AnswerOutcome, InboxAnswers, type PendingAnswer } from './inbox-answers.js';
export type { LaneRequest, LaneResult } from './lane-records.js';
export { Lanes } from './lanes.js';
export { MIGRATION_NAMES } from './migrations/index.js';
export {
  DEFAULT_SQLITE_BUSY_TIMEOUT_MS,
  isPostgresUrl,
  migrate,
  openStore,
  pendingMigrations,
  redactUrl,
  type Store,
  type StoreDialect,
  type StoreOptions,
} from './open.js';
export { type StoreHolder, StoreOwner, stillServes } from './owner.js';
export {
  type GroupPlace,
  type LeftoverGroup,
  type ProcessGroupKey,
  type ProcessGroupRecord,
  ProcessGroups,
} from './process-groups.js';
export {
  ACTIVE_STATUSES,
  Processes,
  type ProcessRecord,
  type ProcessStatus,
  type TriggerOrigin,
} from './processes.js';
export { Projects } from './projects.js';
export { type Run, Runs, runRow } from './runs.js';
export { type ClaimSwap, type SchedulerKey, type ScheduleState, Schedules } from './schedules.js';
export { type Session, Sessions } from './sessions.js';
export { type SettingRecord, type SettingScope, Settings } from './settings.js';
export { hashToken, ROLES, type Role, type TokenRecord, Tokens } from './tokens.js';
export { type User, Users } from './users.js';
export { type WorkerRecord, Workers } from './workers.js';

import { AgentRuns } from './agent-runs.js';
import { Audit } from './audit.js';
import { Backfills } from './backfills.js';
import { Documents } from './documents.js';
import { Feed } from './feed.js';
import { Inbox } from './inbox.js';
import { InboxAnswers } from './inbox-answers.js';
import { Lanes } from './lanes.js';
import type { Store } from './open.js';
import { StoreOwner } from './owner.js';
import { Pauses } from './pauses.js';
import { ProcessGroups } from './process-groups.js';
import { Processes } from './processes.js';
import { Projects } from './projects.js';
import { Runs } from './runs.js';
import { Schedules } from './schedules.js';
import { Sessions } from './sessions.js';
import { Settings } from './settings.js';
import { Tokens } from './tokens.js';
import { Users } from './users.js';
import { Workers } from './workers.js';
import { WorkflowRuns } from './workflow-runs.js';

/** Every repository over one store. */
export interface Repositories {
  readonly store: Store;
  readonly documents: Documents;
  readonly schedules: Schedules;
  readonly runs: Runs;
  readonly sessions: Sessions;
  readonly settings: Settings;
  readonly tokens: Tokens;
  readonly processes: Processes;
  /** The OS process groups workers started (decisions §5 fencing). */
  readonly processGroups: ProcessGroups;
  readonly projects: Projects;
  readonly feed: Feed;
  readonly lanes: Lanes;
  /** The backfill queues of schedulers' lanes (issue #22). */
  readonly backfills: Backfills;
  readonly users: Users;
  readonly workers: Workers;
  /** SQLite: which worker serves the store (decisions §5). */
  readonly owner: StoreOwner;
  readonly inbox: Inbox;
  readonly pauses: Pauses;
  readonly workflowRuns: WorkflowRuns;
  readonly audit: Audit;
  /** The agent runs handed to agent services (issue #25). */
  readonly agentRuns: AgentRuns;
  /** The answers of blocked agent runs' questions (issue #25). */
  readonly inboxAnswers: InboxAnswers;
}

export function repositories(store: Store): Repositories {
  const workers = new Workers(store);
  return {
    store,
    documents: new Documents(store),
    schedules: new Schedules(store),
    runs: new Runs(store),
    sessions: new Sessions(store),
    settings: new Settings(store),
    tokens: new Tokens(store),
    processes: new Processes(store),
    processGroups: new ProcessGroups(store),
    projects: new Projects(store),
    feed: new Feed(store),
    lanes: new Lanes(store),
    backfills: new Backfills(store),
    users: new Users(store),
    workers,
    owner: new StoreOwner(store, workers),
    inbox: new Inbox(store),
    pauses: new Pauses(store),
    workflowRuns: new WorkflowRuns(store),
    audit: new Audit(store),
    agentRuns: new AgentRuns(store),
    inboxAnswers: new InboxAnswers(store),
  };
}
