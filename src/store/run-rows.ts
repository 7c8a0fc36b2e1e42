import type { Selectable } from 'kysely';
import type { Run } from '../runs/run.js';
import { recordedLockMode } from '../scheduler/definition.js';
import { tokenOf } from './fencing.js';
import type { RunsTable } from './schema.js';

/** The runs table's rows and `Run`s, one into the other (see `Runs`). */

const num = (v: number | null) => (v === null ? null : Number(v));

// The one place a row becomes a `Run`: the store keeps each state's fields as `src/runs` types them.
export function toRun(row: Selectable<RunsTable>): Run {
  return {
    correlationId: row.correlation_id,
    tenant: row.tenant,
    project: row.project,
    name: row.name,
    scheduledFor: Number(row.scheduled_for),
    trigger: row.trigger as Run['trigger'],
    coalesced: Number(row.coalesced) === 1,
    coalescedUntil: num(row.coalesced_until),
    claimedAt: Number(row.claimed_at),
    state: row.state as Run['state'],
    outcome: row.outcome,
    reason: row.reason,
    runAs: row.run_as,
    sessionId: row.session_id,
    processId: row.process_id,
    logPath: row.log_path,
    startedAt: num(row.started_at),
    endedAt: num(row.ended_at),
    workerId: row.worker_id,
    lockMode: recordedLockMode(row.lock_mode),
    attempt: Number(row.attempt),
    fencingToken: tokenOf(row.fencing_token),
    queuedAt: num(row.queued_at),
    waitingBehind: row.waiting_behind,
    foldedInto: row.folded_into,
  } as Run;
}

/** The row a claim inserts for a run (see `Schedules.claim`). */
export function runRow(run: Run): Selectable<RunsTable> {
  return {
    correlation_id: run.correlationId,
    tenant: run.tenant,
    project: run.project,
    name: run.name,
    scheduled_for: run.scheduledFor,
    trigger: run.trigger,
    coalesced: run.coalesced ? 1 : 0,
    coalesced_until: run.coalescedUntil,
    claimed_at: run.claimedAt,
    state: run.state,
    outcome: run.outcome,
    reason: run.reason,
    run_as: run.runAs,
    session_id: run.sessionId,
    process_id: run.processId,
    log_path: run.logPath,
    started_at: run.startedAt,
    ended_at: run.endedAt,
    worker_id: run.workerId,
    lock_mode: run.lockMode,
    attempt: run.attempt,
    fencing_token: run.fencingToken,
    queued_at: run.queuedAt,
    waiting_behind: run.waitingBehind,
    folded_into: run.foldedInto,
  };
}
