import type { Insertable, Transaction } from 'kysely';
import type { AdmissionDecision } from '../decisions/admission.js';
import type { BudgetRefusal, RunBudget } from '../decisions/budget.js';
import type { OverlapPolicy, ScheduleBounds } from '../scheduler/definition.js';
import { tokenOf } from './fencing.js';
import type { NewInboxItem } from './inbox.js';
import type { StoreDialect } from './open.js';
import { FEED_COLUMNS, PROCESS_COLUMNS } from './row-kinds.js';
import type { Run } from './runs.js';
import type { SchedulerKey } from './schedules.js';
import type { Database, FeedTable, ProcessesTable } from './schema.js';
import { insertRows } from './values.js';

/*
 * What a scheduler's lane takes and gives (see `src/store/lanes.ts`): the run to admit and the
 * opening a start writes, the attempt a start begins, the result of an admission, and a workflow
 * target's start record; and what both admission paths (`Lanes.admit` one at a time, the batch
 * start of `src/store/lane-batch.ts`) do alike: the scheduler's lock key, the attempt read from
 * its row, the writing of the openings.
 */

/** The run to admit: held by `workerId`, in state `claimed` or `queued`. */
export interface LaneRequest {
  readonly key: SchedulerKey;
  readonly correlationId: string;
  readonly workerId: string | null;
  readonly policy: OverlapPolicy;
  readonly oneShot: boolean;
  /** How the run was triggered. */
  readonly trigger: Run['trigger'];
  /** The occurrence the run serves, UTC ms (a manual fire's: the instant it was requested). */
  readonly scheduledFor: number;
  /**
   * False: the run does not yield to an earlier manual fire (see {@link LaneResult.first}) and is
   * decided now. Default true.
   */
  readonly yielding?: boolean;
  /** Written when the run starts: the session and process it starts in, and the instant (UTC ms). */
  readonly start: {
    readonly sessionId: string | null;
    readonly processId: string | null;
    readonly at: number;
  };
  /**
   * What a started run has from the transaction that starts it on (issue #20): its process row
   * (a recipe target) and its START line, so that no engine is entered for a run without them.
   */
  readonly opening?: Opening | undefined;
  /**
   * The scheduler's bounds, when it has any (issue #22), and the stored timing they were read
   * with: the admission refuses a run outside them, and the start that spends `maxRuns` ends
   * the schedule (while its timing is still this one). A batch start leaves such a run to
   * {@link Lanes.admit}.
   */
  readonly bounds?: { readonly limits: ScheduleBounds; readonly timing: string } | undefined;
  /**
   * The run budget of the run's project, when it has one (issue #22): the admission counts the
   * project's runs started in the rolling hour and day under the project's lock and refuses one
   * over it. A batch start leaves such a run to {@link Lanes.admit}.
   */
  readonly budget?: RunBudget | undefined;
  /**
   * The inbox item telling of a run the budget refused, by the limit that refused it: written in
   * the admission's transaction, under the project's lock, unless its user has one of that title
   * already (one per window: the title names it).
   */
  readonly budgetNotice?: ((refusal: BudgetRefusal) => NewInboxItem) | undefined;
}

/** A started run's process row (absent for a workflow target) and START line. */
export interface Opening {
  readonly process?: Insertable<ProcessesTable>;
  readonly line: Insertable<FeedTable>;
}

/** The start of a workflow target's attempt, to record (see {@link Lanes.recordWorkflowStart}). */
export interface WorkflowStartRecord {
  readonly correlationId: string;
  /** The fencing token of the attempt that writes it. */
  readonly fencingToken: number;
  /** When its workflow run was started, UTC ms. */
  readonly startedAt: number;
  /** Its START line, which names the workflow run. */
  readonly line: Insertable<FeedTable>;
}

/** The attempt a start began, from the row of its run as the start returned it. */
export function attemptOf(row: { attempt: number; fencing_token: number | string | null }): Attempt {
  return { attempt: Number(row.attempt), fencingToken: tokenOf(row.fencing_token) as number };
}

/** The advisory-lock key of a scheduler: one per scheduler, the same in every admission path. */
export function lockKeyOf(schedulerKey: string): string {
  return schedulerKey.replaceAll('\u0000', '/');
}

/**
 * The attempt a start began (decisions §5, see `src/store/fencing.ts`): the run's attempt count
 * after it (1 for its first start) and the attempt's fencing token.
 */
export interface Attempt {
  readonly attempt: number;
  readonly fencingToken: number;
}

/** What `admit` did, and the active run it found (for `cancel`: the one to stop). */
export type LaneResult = {
  readonly active:
    | { readonly correlationId: string; readonly processId: string | null; readonly workerId: string | null }
    | undefined;
  /**
   * The lane's waiting run (not a backfill occurrence) other than the one admitted: for
   * `consolidate`, the run it was folded into.
   */
  readonly waiting?: string | undefined;
  /** For `yield`: the earliest manual fire to judge first (still claimed; nothing was moved). */
  readonly first?: { readonly correlationId: string; readonly workerId: string | null } | undefined;
} & (
  | {
      /** The run started. */
      readonly decision: 'start';
      /** The attempt the start began. */
      readonly attempt: Attempt;
    }
  | {
      /**
       * The admission decision (`decideAdmission`), or `lost` when the run was no longer this
       * worker's to move. `deleted` and `disabled` runs were moved to `skipped` (`skipOf`).
       */
      readonly decision: Exclude<AdmissionDecision, 'start'> | 'lost';
      readonly attempt?: undefined;
    }
);

/** Writes the openings (process rows and START lines) of runs started in `trx`. */
export async function writeOpenings(
  trx: Transaction<Database>,
  dialect: StoreDialect,
  openings: readonly Opening[],
): Promise<void> {
  const processes = openings.flatMap((o) => (o.process === undefined ? [] : [o.process]));
  await insertRows(trx, dialect, 'processes', PROCESS_COLUMNS, processes);
  await insertRows(
    trx,
    dialect,
    'feed',
    FEED_COLUMNS,
    openings.map((o) => o.line),
  );
}
