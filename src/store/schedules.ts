import { type Selectable, type SqlBool, sql, type Transaction } from 'kysely';
import { slotOf } from '../decisions/partition.js';
import { type Claimer, claimableDue, countDue, type UpcomingPage, upcomingStates } from './claimable.js';
import { planByKeys } from './key-plans.js';
import type { Store } from './open.js';
import { RUN_COLUMNS } from './row-kinds.js';
import type { Database, RunsTable, ScheduleStateTable } from './schema.js';
import { insertRows, rowIn, valuesList } from './values.js';

/** Identifies an effective scheduler: the (tenant, project) it fires in, and its name. */
export interface SchedulerKey {
  readonly tenant: string;
  readonly project: string;
  readonly name: string;
}

/** Persisted schedule state (decisions §4). Instants are UTC epoch ms. */
export interface ScheduleState extends SchedulerKey {
  readonly source: 'project' | 'tenant';
  readonly documentVersion: number;
  readonly nextRunAt: number | null;
  readonly lastScheduledAt: number | null;
  /** What `nextRunAt` was computed from (trigger, zone, enabled); a refresh that leaves it alone keeps the state. */
  readonly timing: string | null;
}

/** A run row as inserted by a claim. */
export type NewRun = Selectable<RunsTable>;

function toState(row: Selectable<ScheduleStateTable>): ScheduleState {
  return {
    tenant: row.tenant,
    project: row.project,
    name: row.name,
    source: row.source as 'project' | 'tenant',
    documentVersion: Number(row.document_version),
    nextRunAt: row.next_run_at === null ? null : Number(row.next_run_at),
    lastScheduledAt: row.last_scheduled_at === null ? null : Number(row.last_scheduled_at),
    timing: row.timing,
  };
}

/** The compare-and-swap of a claim: what the claimer saw, and what it moves the state to. */
export interface ClaimSwap {
  readonly expectedNextRunAt: number;
  readonly expectedLastScheduledAt: number | null;
  readonly nextRunAt: number | null;
  readonly now: number;
}

/** One claim of {@link Schedules.claimMany}: the scheduler, its swap, the run it inserts. */
export interface Claim {
  readonly key: SchedulerKey;
  readonly swap: ClaimSwap;
  /** The run of the claimed occurrence; its `scheduled_for` becomes `lastScheduledAt`. */
  readonly run: NewRun;
  /**
   * A run recorded skipped for the older occurrences of the same backlog, inserted with `run`
   * under the same swap (`misfire: skip` with the newest within the threshold, decisions §4).
   */
  readonly skipped?: NewRun;
}

/**
 * Whether a stored timing (`timingOf` in the registrar: JSON with `enabled`) is a disabled
 * scheduler's. Matches {@link DISABLED_TIMING_PATTERN}, its SQL form.
 */
export function isDisabledTiming(timing: string | null): boolean {
  return timing?.includes('"enabled":false') === true;
}

/** A SQL `like` pattern that matches the stored timing of a disabled scheduler ({@link isDisabledTiming}). */
export const DISABLED_TIMING_PATTERN = '%"enabled":false%';

/** One string per scheduler key (for maps keyed by scheduler). */
export function schedulerKeyString(key: SchedulerKey): string {
  return `${key.tenant}\u0000${key.project}\u0000${key.name}`;
}

/** Schedule state rows and the claim of decisions §4. */
export class Schedules {
  constructor(private readonly store: Store) {}

  async get(key: SchedulerKey): Promise<ScheduleState | undefined> {
    const row = await this.store.db
      .selectFrom('schedule_state')
      .selectAll()
      .where('tenant', '=', key.tenant)
      .where('project', '=', key.project)
      .where('name', '=', key.name)
      .executeTakeFirst();
    return row === undefined ? undefined : toState(row);
  }

  async list(tenant: string, project: string): Promise<ScheduleState[]> {
    const rows = await this.store.db
      .selectFrom('schedule_state')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('project', '=', project)
      .orderBy('name')
      .execute();
    return rows.map(toState);
  }

  /** Inserts or replaces the state of one scheduler (registration, refresh). */
  async upsert(state: ScheduleState, now: number): Promise<void> {
    const values = {
      tenant: state.tenant,
      project: state.project,
      name: state.name,
      source: state.source,
      document_version: state.documentVersion,
      next_run_at: state.nextRunAt,
      last_scheduled_at: state.lastScheduledAt,
      updated_at: now,
      timing: state.timing,
      slot: slotOf(state),
    };
    await this.store.db
      .insertInto('schedule_state')
      .values(values)
      .onConflict((oc) =>
        oc.columns(['tenant', 'project', 'name']).doUpdateSet({
          source: values.source,
          document_version: values.document_version,
          next_run_at: values.next_run_at,
          last_scheduled_at: values.last_scheduled_at,
          updated_at: now,
          timing: values.timing,
        }),
      )
      .execute();
  }

  /**
   * Records that a scheduler's document changed without changing its timing: only the source,
   * version and timing move; the instants stay as the claims left them (a refresh racing a
   * claim must not put back an occurrence already claimed).
   */
  async touch(
    key: SchedulerKey,
    source: 'project' | 'tenant',
    documentVersion: number,
    timing: string,
    now: number,
  ): Promise<void> {
    await this.store.db
      .updateTable('schedule_state')
      .set({ source, document_version: documentVersion, timing, updated_at: now })
      .where('tenant', '=', key.tenant)
      .where('project', '=', key.project)
      .where('name', '=', key.name)
      .execute();
  }

  /** Removes every state of a project (unloading it, spec §3); returns how many. */
  async removeProject(tenant: string, project: string): Promise<number> {
    const result = await this.store.db
      .deleteFrom('schedule_state')
      .where('tenant', '=', tenant)
      .where('project', '=', project)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** The (tenant, project) pairs that have schedule state: the loaded projects. */
  async loadedProjects(): Promise<{ tenant: string; project: string }[]> {
    return this.store.db.selectFrom('schedule_state').select(['tenant', 'project']).distinct().execute();
  }

  async remove(key: SchedulerKey): Promise<void> {
    await this.store.db
      .deleteFrom('schedule_state')
      .where('tenant', '=', key.tenant)
      .where('project', '=', key.project)
      .where('name', '=', key.name)
      .execute();
  }

  /** How many states are due at or before `to` (UTC ms), up to `cap`: see {@link countDue}. */
  dueCount(to: number, cap: number): Promise<number> {
    return countDue(this.store, to, cap);
  }

  /** The states a worker prepares before their instant: see {@link upcomingStates}. */
  upcoming(...page: UpcomingPage): Promise<ScheduleState[]> {
    return upcomingStates(this.store, ...page).then((rows) => rows.map(toState));
  }

  /**
   * States that wait for an occurrence after `instant` (UTC ms), in key order, the page after the
   * key `after` (from the first when missing), at most `limit`: what a replan after the wall clock
   * was set back reads (issue #20).
   */
  async waitingAfter(
    instant: number,
    after: SchedulerKey | undefined,
    limit: number,
  ): Promise<ScheduleState[]> {
    let query = this.store.db
      .selectFrom('schedule_state')
      .selectAll()
      .where('next_run_at', 'is not', null)
      .where('next_run_at', '>', instant);
    if (after !== undefined)
      query = query.where(
        sql<SqlBool>`(tenant, project, name) > (${after.tenant}, ${after.project}, ${after.name})`,
      );
    const rows = await query.orderBy('tenant').orderBy('project').orderBy('name').limit(limit).execute();
    return rows.map(toState);
  }

  /**
   * Moves a state's `nextRunAt` to `nextRunAt` (a replan, issue #20), if it still waits for
   * `expected.nextRunAt` after `expected.lastScheduledAt`: a claim or refresh in between wins.
   * Returns whether it moved.
   */
  async replan(
    key: SchedulerKey,
    expected: { readonly nextRunAt: number; readonly lastScheduledAt: number | null },
    nextRunAt: number,
    now: number,
  ): Promise<boolean> {
    const result = await this.store.db
      .updateTable('schedule_state')
      .set({ next_run_at: nextRunAt, updated_at: now })
      .where('tenant', '=', key.tenant)
      .where('project', '=', key.project)
      .where('name', '=', key.name)
      .where('next_run_at', '=', expected.nextRunAt)
      .where((eb) =>
        expected.lastScheduledAt === null
          ? eb('last_scheduled_at', 'is', null)
          : eb('last_scheduled_at', '=', expected.lastScheduledAt),
      )
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * The earliest `nextRunAt` (UTC ms) of the whole store, or of the schedulers in `slots` (on
   * PostgreSQL; SQLite's one process claims every slot); null when none is scheduled. By the
   * index on next occurrence: the slots' earliest is the first entry in one of them.
   */
  async earliestNextRunAt(slots?: readonly number[]): Promise<number | null> {
    if (slots !== undefined && this.store.dialect === 'postgres') {
      if (slots.length === 0) return null;
      const row = await this.store.db
        .selectFrom('schedule_state')
        .select('next_run_at')
        .where('next_run_at', 'is not', null)
        .where('slot', 'in', slots)
        .orderBy('next_run_at')
        .limit(1)
        .executeTakeFirst();
      return row?.next_run_at == null ? null : Number(row.next_run_at);
    }
    const row = await this.store.db
      .selectFrom('schedule_state')
      .select((eb) => eb.fn.min('next_run_at').as('earliest'))
      .executeTakeFirst();
    return row?.earliest === null || row?.earliest === undefined ? null : Number(row.earliest);
  }

  /**
   * Claims one occurrence (decisions §4); see {@link claimMany}. Returns false when another
   * claimer got there first (then nothing was written), or when the occurrence already had a run
   * (then only the state moved on).
   */
  async claim(key: SchedulerKey, swap: ClaimSwap, run: NewRun): Promise<boolean> {
    const won = await this.claimMany([{ key, swap, run }], swap.now);
    return won.has(run.correlation_id);
  }

  /**
   * Claims many occurrences in one transaction (decisions §4), whatever their number: for each,
   * a compare-and-swap of (`nextRunAt`, `lastScheduledAt`) from what the claimer saw, and the
   * insert of its run row (unique on the occurrence). On PostgreSQL the rows are first locked in
   * key order, skipping rows another worker is claiming now: workers split a due set instead of
   * queueing behind each other, and never deadlock. A claim whose swap fails writes nothing; one
   * whose occurrence already has a run (a manual fire for the same instant) only moves the state
   * on — a schedule must never stay behind an occurrence it cannot claim.
   *
   * @param now UTC epoch ms, written as the states' `updated_at`.
   * @returns the correlation ids of the runs inserted: the claims won.
   */
  async claimMany(claims: readonly Claim[], now: number): Promise<Set<string>> {
    if (claims.length === 0) return new Set();
    return this.store.db.transaction().execute(async (trx) => {
      await planByKeys(trx, this.store.dialect);
      let open = claims;
      if (this.store.dialect === 'postgres') {
        const locked = await trx
          .selectFrom('schedule_state')
          .select(['tenant', 'project', 'name'])
          .where(
            rowIn(
              ['tenant', 'project', 'name'],
              claims.map(({ key }) => [key.tenant, key.project, key.name]),
            ),
          )
          .orderBy('tenant')
          .orderBy('project')
          .orderBy('name')
          .forUpdate()
          .skipLocked()
          .execute();
        const free = new Set(locked.map(schedulerKeyString));
        open = claims.filter(({ key }) => free.has(schedulerKeyString(key)));
      }
      return this.#claimIn(trx, open, now);
    });
  }

  /**
   * Claims what is due at `instant` (UTC ms), oldest first, at most `limit` (decisions §4):
   * `decide` gets the due states and returns the claims to make (none for a state it passes
   * over), made as {@link claimMany} makes them. On PostgreSQL the due states are read locked
   * (`for update skip locked`) in the claim's own transaction, so workers claiming at once take
   * disjoint sets instead of queueing on the same rows; `decide` then runs inside it and must
   * not write schedule states (its reads go through other pooled connections). On SQLite (one
   * process, one connection) `decide` runs before the transaction.
   *
   * @param now UTC ms, written as the states' `updated_at`.
   * @returns the states read and the correlation ids of the runs inserted.
   */
  async claimDue(
    instant: number,
    limit: number,
    now: number,
    claimer: Claimer,
    decide: (due: readonly ScheduleState[]) => Promise<readonly Claim[]>,
  ): Promise<{ due: ScheduleState[]; won: Set<string> }> {
    if (this.store.dialect !== 'postgres') {
      const rows = await claimableDue(this.store.db, this.store.dialect, instant, limit, claimer).execute();
      const due = rows.map(toState);
      return { due, won: await this.claimMany(await decide(due), now) };
    }
    return this.store.db.transaction().execute(async (trx) => {
      await planByKeys(trx, this.store.dialect);
      const rows = await claimableDue(trx, this.store.dialect, instant, limit, claimer)
        .forUpdate()
        .skipLocked()
        .execute();
      const due = rows.map(toState);
      return { due, won: await this.#claimIn(trx, await decide(due), now) };
    });
  }

  // The compare-and-swaps and run inserts of a claim, in the caller's transaction.
  async #claimIn(trx: Transaction<Database>, claims: readonly Claim[], now: number): Promise<Set<string>> {
    if (claims.length === 0) return new Set();
    const swaps = valuesList(
      this.store.dialect,
      claims.map(({ key, swap, run }) => [
        key.tenant,
        key.project,
        key.name,
        swap.expectedNextRunAt,
        swap.expectedLastScheduledAt,
        swap.nextRunAt,
        run.scheduled_for,
      ]),
      ['text', 'text', 'text', 'bigint', 'bigint', 'bigint', 'bigint'],
    );
    const moved = await sql<SchedulerKey>`
      update schedule_state
      set next_run_at = v.column6, last_scheduled_at = v.column7, updated_at = ${now}
      from ${swaps} as v
      where schedule_state.tenant = v.column1 and schedule_state.project = v.column2
        and schedule_state.name = v.column3 and schedule_state.next_run_at = v.column4
        and (schedule_state.last_scheduled_at = v.column5
          or (schedule_state.last_scheduled_at is null and v.column5 is null))
      returning schedule_state.tenant as tenant, schedule_state.project as project, schedule_state.name as name`.execute(
      trx,
    );
    const swapped = new Set(moved.rows.map(schedulerKeyString));
    const runs = claims
      .filter(({ key }) => swapped.has(schedulerKeyString(key)))
      .flatMap(({ run, skipped }) => (skipped === undefined ? [run] : [skipped, run]));
    if (runs.length === 0) return new Set();
    const inserted = await insertRows<NewRun, { correlation_id: string }>(
      trx,
      this.store.dialect,
      'runs',
      RUN_COLUMNS,
      runs,
      sql`on conflict (tenant, project, name, scheduled_for) do nothing returning correlation_id`,
    );
    return new Set(inserted.map((r) => r.correlation_id));
  }
}
