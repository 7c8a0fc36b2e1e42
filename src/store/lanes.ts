import { type Insertable, sql, type Transaction } from 'kysely';
import { type AdmissionDecision, decideAdmission, type SchedulerStanding } from '../decisions/admission.js';
import { decideOverlap } from '../decisions/overlap.js';
import { skipOf } from '../runs/outcomes.js';
import type { OverlapPolicy } from '../scheduler/definition.js';
import { schedulerPath } from '../scheduler/paths.js';
import { TENANT_PROJECT } from './document-rows.js';
import { reserveFencingTokens, tokenOf } from './fencing.js';
import type { Store } from './open.js';
import type { Run } from './runs.js';
import {
  DISABLED_TIMING_PATTERN,
  isDisabledTiming,
  type SchedulerKey,
  schedulerKeyString,
} from './schedules.js';
import type { Database, FeedTable, ProcessesTable } from './schema.js';
import { valuesList } from './values.js';

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

function attemptOf(row: { attempt: number; fencing_token: number | string | null }): Attempt {
  return { attempt: Number(row.attempt), fencingToken: tokenOf(row.fencing_token) as number };
}

/** The advisory-lock key of a scheduler: one per scheduler, the same in every admission path. */
function lockKeyOf(schedulerKey: string): string {
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

/**
 * The lane of a scheduler (spec §5, §6): one run active at a time, at most one waiting. Every
 * start of every source — tick, catch-up, manual fire, a waiting run's turn — goes through
 * {@link Lanes.admit}, which decides with the pure `decideAdmission` and applies the decision in
 * one transaction that holds the scheduler's lock, so no path can bypass the policy and two
 * workers cannot both start. Each start begins an attempt of the run with its fencing token,
 * taken under that lock (`src/store/fencing.ts`). The lane also looks, at the instant, at what
 * changed since the run was claimed: a scheduler deleted or disabled since starts nothing, and a
 * manual fire requested before the run's occurrence is judged before it (issue #20).
 */
export class Lanes {
  constructor(private readonly store: Store) {}

  /**
   * Admits one run held by `request.workerId` (`claimed` or `queued`) through its scheduler's lane,
   * in one transaction under the scheduler's lock: decides with `decideAdmission` against the runs
   * of the scheduler that are started, queued or claimed, and its schedule state, and applies the
   * decision — `start` moves the run to `started` with `request.start` (session, process id, the
   * instant in UTC ms) and a new attempt and fencing token, and writes its `opening` (process row,
   * START line); `queue`/`cancel` move it to `queued`; the overlap skips, `deleted` and `disabled`
   * move it to `skipped` with its outcome; `yield` moves nothing and names the earlier manual fire
   * to judge first. `lost`: the run was no longer this worker's to move.
   *
   * @throws a store error (`STORE_BUSY`, `STORE_UNAVAILABLE`): nothing was moved.
   */
  async admit(request: LaneRequest): Promise<LaneResult> {
    return this.store.db.transaction().execute(async (trx) => {
      await this.#lock(trx, request.key);
      const { key } = request;
      const others = await trx
        .selectFrom('runs')
        .select(['correlation_id', 'state', 'process_id', 'worker_id', 'trigger', 'scheduled_for'])
        .where('tenant', '=', key.tenant)
        .where('project', '=', key.project)
        .where('name', '=', key.name)
        .where('state', 'in', ['started', 'queued', 'claimed'])
        .where('correlation_id', '!=', request.correlationId)
        .execute();
      const activeRow = others.find((r) => r.state === 'started');
      const active =
        activeRow === undefined
          ? undefined
          : {
              correlationId: activeRow.correlation_id,
              processId: activeRow.process_id,
              workerId: activeRow.worker_id,
            };
      // The earliest manual fire requested before this run's occurrence that no lane judged yet.
      const first = others
        .filter(
          (r) =>
            r.state === 'claimed' && r.trigger === 'manual' && Number(r.scheduled_for) < request.scheduledFor,
        )
        .sort((a, b) => Number(a.scheduled_for) - Number(b.scheduled_for))[0];
      const decision = decideAdmission({
        policy: request.policy,
        oneShot: request.oneShot,
        active: activeRow !== undefined,
        waiting: others.some((r) => r.state === 'queued'),
        trigger: request.trigger,
        standing: await this.#standing(trx, key, request.trigger),
        earlierManualFire: first !== undefined && request.yielding !== false,
      });
      if (decision === 'yield') {
        const next = first as (typeof others)[number];
        return { decision, active, first: { correlationId: next.correlation_id, workerId: next.worker_id } };
      }
      const tokenAt =
        decision === 'start' ? await reserveFencingTokens(trx, this.store.dialect, 1) : undefined;
      const values =
        decision === 'start' && tokenAt !== undefined
          ? {
              state: 'started',
              session_id: request.start.sessionId,
              process_id: request.start.processId,
              started_at: request.start.at,
              attempt: sql<number>`attempt + 1`,
              fencing_token: tokenAt(sql`1`),
            }
          : decision === 'queue' || decision === 'cancel'
            ? { state: 'queued' }
            : { state: 'skipped', ...skipOf(decision), ended_at: request.start.at };
      const moved = await trx
        .updateTable('runs')
        .set(values)
        .where('correlation_id', '=', request.correlationId)
        .where('state', 'in', ['claimed', 'queued'])
        .where((eb) =>
          request.workerId === null ? eb('worker_id', 'is', null) : eb('worker_id', '=', request.workerId),
        )
        .returning(['attempt', 'fencing_token'])
        .executeTakeFirst();
      if (moved === undefined) return { decision: 'lost', active };
      if (decision === 'start' && request.opening !== undefined) await this.#open(trx, [request.opening]);
      if (decision === 'cancel' && active?.processId) {
        await trx
          .updateTable('processes')
          .set({ stop_requested_at: request.start.at, stop_reason: 'scheduler-overlap' })
          .where('id', '=', active.processId)
          .where('stop_requested_at', 'is', null)
          .execute();
      }
      if (decision !== 'start') return { decision, active };
      return { decision, active, attempt: attemptOf(moved) };
    });
  }

  /**
   * Whether the scheduler of a run is still there at its admission: a scheduled run's schedule
   * state (a refresh removes it when the document is deleted, and records `enabled`); a manual
   * fire's document, in the project or `_tenant` (a manual fire needs no schedule state).
   */
  async #standing(
    trx: Transaction<Database>,
    key: SchedulerKey,
    trigger: Run['trigger'],
  ): Promise<SchedulerStanding> {
    if (trigger === 'manual') {
      const document = await trx
        .selectFrom('documents')
        .select('id')
        .where('tenant', '=', key.tenant)
        .where('project', 'in', [key.project, TENANT_PROJECT])
        .where('path', '=', schedulerPath(key.name))
        .executeTakeFirst();
      return document === undefined ? 'deleted' : 'present';
    }
    const state = await trx
      .selectFrom('schedule_state')
      .select('timing')
      .where('tenant', '=', key.tenant)
      .where('project', '=', key.project)
      .where('name', '=', key.name)
      .executeTakeFirst();
    if (state === undefined) return 'deleted';
    return isDisabledTiming(state.timing) ? 'disabled' : 'present';
  }

  // The process rows and START lines of runs started in this transaction.
  async #open(trx: Transaction<Database>, openings: readonly Opening[]): Promise<void> {
    const processes = openings.flatMap((o) => (o.process === undefined ? [] : [o.process]));
    if (processes.length > 0) await trx.insertInto('processes').values(processes).execute();
    if (openings.length > 0)
      await trx
        .insertInto('feed')
        .values(openings.map((o) => o.line))
        .execute();
  }

  /**
   * Starts the runs of a batch whose lane is free, in one transaction (issue #4: one round of
   * statements for a whole due second, not one transaction per run): the locks of every
   * scheduler in the batch, taken in key order (PostgreSQL), then one UPDATE that moves each run
   * this worker holds to `started` (its session, process id and instant set, and a new attempt with
   * its fencing token: `src/store/fencing.ts`) unless another run of its scheduler is started or
   * waiting, then the process rows and START lines of the runs it moved
   * ({@link LaneRequest.opening}). A free lane is `start` under every policy (the pure
   * `decideOverlap` with nothing active or waiting); a run whose lane is busy, the second run of one
   * scheduler in a batch, one this worker no longer holds, one whose scheduler lost its schedule
   * state or was disabled, and one with an earlier manual fire still claimed (issue #20) is left as
   * it was, `deferred`, for {@link admit} to decide and record one at a time.
   *
   * @param at the start instant (UTC ms) written for every run started.
   * @returns per request (same order): the attempt it began, or `deferred`.
   */
  async startMany(
    starts: readonly LaneRequest[],
    workerId: string,
    at: number,
  ): Promise<(Attempt | 'deferred')[]> {
    const free = { oneShot: false, active: false, waiting: false } as const;
    const seen = new Set<string>();
    const chosen = starts.filter((request) => {
      const key = schedulerKeyString(request.key);
      if (seen.has(key) || decideOverlap({ ...free, policy: request.policy }) !== 'start') return false;
      seen.add(key);
      return true;
    });
    if (chosen.length === 0) return starts.map(() => 'deferred');
    // On SQLite as expressions, so that it looks each run up by its key instead of walking this
    // worker's claimed runs with the whole list for each (issue #11). PostgreSQL keeps the columns:
    // the expressions made its every-second starts 100-400 ms late.
    const sqlite = this.store.dialect === 'sqlite';
    const held = sqlite ? sql`(runs.state || '')` : sql`runs.state`;
    const holder = sqlite ? sql`(runs.worker_id || '')` : sql`runs.worker_id`;
    const started = await this.store.db.transaction().execute(async (trx) => {
      if (this.store.dialect === 'postgres') {
        await sql`select pg_advisory_xact_lock(hashtext(k)) from (select unnest(${sql.val([...seen].sort().map(lockKeyOf))}::text[]) as k order by k) as ordered`.execute(
          trx,
        );
      }
      const tokenAt = await reserveFencingTokens(trx, this.store.dialect, chosen.length);
      // A busy lane, an earlier manual fire not judged yet, a scheduler without schedule state
      // (deleted) or disabled: the one-at-a-time path decides and records it.
      const moved = await sql<{ correlation_id: string; attempt: number; fencing_token: string | number }>`
        update runs
        set state = 'started', session_id = v.column2, process_id = v.column3, started_at = ${at},
          attempt = runs.attempt + 1, fencing_token = ${tokenAt(sql`v.column4`)}
        from ${valuesList(
          this.store.dialect,
          chosen.map((request, i) => [
            request.correlationId,
            request.start.sessionId,
            request.start.processId,
            i + 1,
          ]),
          ['text', 'text', 'text', 'bigint'],
        )} as v
        where runs.correlation_id = v.column1
          and ${held} in ('claimed', 'queued') and ${holder} = ${workerId}
          and not exists (
            select 1 from runs as other
            where other.tenant = runs.tenant and other.project = runs.project and other.name = runs.name
              and other.state in ('started', 'queued', 'claimed') and other.correlation_id <> runs.correlation_id
              and (other.state <> 'claimed'
                or (other.trigger = 'manual' and other.scheduled_for < runs.scheduled_for)))
          and exists (
            select 1 from schedule_state as s
            where s.tenant = runs.tenant and s.project = runs.project and s.name = runs.name
              and (s.timing is null or s.timing not like ${DISABLED_TIMING_PATTERN}))
        returning runs.correlation_id as correlation_id, runs.attempt as attempt,
          runs.fencing_token as fencing_token`.execute(trx);
      const attempts = new Map(moved.rows.map((r) => [r.correlation_id, attemptOf(r)]));
      await this.#open(
        trx,
        chosen.flatMap((request) =>
          attempts.has(request.correlationId) && request.opening !== undefined ? [request.opening] : [],
        ),
      );
      return attempts;
    });
    return starts.map((request) => started.get(request.correlationId) ?? 'deferred');
  }

  /**
   * Of the given attempts (a run and the fencing token its start took), those that are still
   * their run's current attempt, `started`: one read for the lot. An attempt missing from the
   * answer lost its run to another worker (decisions §5 fencing).
   */
  async currentAttempts(
    attempts: readonly { readonly correlationId: string; readonly fencingToken: number | null }[],
  ): Promise<Set<string>> {
    if (attempts.length === 0) return new Set();
    const rows = await this.store.db
      .selectFrom('runs')
      .select(['correlation_id', 'fencing_token'])
      .where(
        'correlation_id',
        'in',
        attempts.map((a) => a.correlationId),
      )
      .where('state', '=', 'started')
      .execute();
    const tokens = new Map(rows.map((r) => [r.correlation_id, tokenOf(r.fencing_token)]));
    return new Set(
      attempts
        .filter((a) => tokens.has(a.correlationId) && tokens.get(a.correlationId) === a.fencingToken)
        .map((a) => a.correlationId),
    );
  }

  /**
   * Records the start of a workflow target's attempt once its workflow run started (its START line
   * names the workflow run, so it cannot come with the admission): the run's start instant (UTC ms)
   * and its START line, in one transaction, only while the run is still `started` at the attempt
   * of the given fencing token — a run another worker ended or started again meanwhile (this
   * worker's lease was taken over) keeps that worker's record.
   *
   * @returns whether this call recorded it (false: the run is no longer this attempt's).
   */
  async recordWorkflowStart(start: WorkflowStartRecord): Promise<boolean> {
    return this.store.db.transaction().execute(async (trx) => {
      const moved = await trx
        .updateTable('runs')
        .set({ started_at: start.startedAt })
        .where('correlation_id', '=', start.correlationId)
        .where('state', '=', 'started')
        .where('fencing_token', '=', start.fencingToken)
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) !== 1) return false;
      await trx.insertInto('feed').values(start.line).execute();
      return true;
    });
  }

  /** Waiting runs whose scheduler has no active run: their turn has come (after a restart, say). */
  async waitingWithoutActive(limit: number): Promise<{ correlationId: string; workerId: string | null }[]> {
    const rows = await this.store.db
      .selectFrom('runs as w')
      .select(['w.correlation_id', 'w.worker_id'])
      .where('w.state', '=', 'queued')
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('runs as a')
              .select('a.correlation_id')
              .whereRef('a.tenant', '=', 'w.tenant')
              .whereRef('a.project', '=', 'w.project')
              .whereRef('a.name', '=', 'w.name')
              .where('a.state', '=', 'started'),
          ),
        ),
      )
      .orderBy('w.claimed_at')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ correlationId: r.correlation_id, workerId: r.worker_id }));
  }

  /** The waiting run of a scheduler, if any. */
  async waiting(key: SchedulerKey): Promise<{ correlationId: string; workerId: string | null } | undefined> {
    const row = await this.store.db
      .selectFrom('runs')
      .select(['correlation_id', 'worker_id'])
      .where('tenant', '=', key.tenant)
      .where('project', '=', key.project)
      .where('name', '=', key.name)
      .where('state', '=', 'queued')
      .executeTakeFirst();
    return row === undefined ? undefined : { correlationId: row.correlation_id, workerId: row.worker_id };
  }

  // SQLite runs one transaction at a time per file; PostgreSQL needs a lock to serialise two
  // workers' admissions for one scheduler (an advisory lock: it needs no row to exist).
  async #lock(trx: Transaction<Database>, key: SchedulerKey): Promise<void> {
    if (this.store.dialect !== 'postgres') return;
    await sql`select pg_advisory_xact_lock(hashtext(${lockKeyOf(schedulerKeyString(key))}))`.execute(trx);
  }
}
