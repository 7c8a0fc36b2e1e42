import type { Selectable } from 'kysely';
import { isUniqueViolation } from './errors.js';
import type { Store } from './open.js';
import type { RunsTable, ScheduleStateTable } from './schema.js';

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

  /** States whose `nextRunAt` is at or before `now`, oldest first, at most `limit`. */
  async due(now: number, limit: number): Promise<ScheduleState[]> {
    const rows = await this.store.db
      .selectFrom('schedule_state')
      .selectAll()
      .where('next_run_at', 'is not', null)
      .where('next_run_at', '<=', now)
      .orderBy('next_run_at')
      .limit(limit)
      .execute();
    return rows.map(toState);
  }

  /** The earliest `nextRunAt` of the whole store, or null when nothing is scheduled. */
  async earliestNextRunAt(): Promise<number | null> {
    const row = await this.store.db
      .selectFrom('schedule_state')
      .select((eb) => eb.fn.min('next_run_at').as('earliest'))
      .executeTakeFirst();
    return row?.earliest === null || row?.earliest === undefined ? null : Number(row.earliest);
  }

  /**
   * Claims one occurrence (decisions §4): in one transaction, a compare-and-swap of
   * (`nextRunAt`, `lastScheduledAt`) from what the claimer saw, and the insert of the run row
   * (unique on the occurrence). Returns false when another claimer got there first (then
   * nothing was written), or when the occurrence already had a run (then only the state moved on).
   */
  async claim(key: SchedulerKey, swap: ClaimSwap, run: NewRun): Promise<boolean> {
    try {
      return await this.#claim(key, swap, run);
    } catch (error) {
      // The occurrence already has a run (e.g. a manual fire for the same instant): not ours to take.
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  #claim(key: SchedulerKey, swap: ClaimSwap, run: NewRun): Promise<boolean> {
    return this.store.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('schedule_state')
        .set({ next_run_at: swap.nextRunAt, last_scheduled_at: run.scheduled_for, updated_at: swap.now })
        .where('tenant', '=', key.tenant)
        .where('project', '=', key.project)
        .where('name', '=', key.name)
        .where('next_run_at', '=', swap.expectedNextRunAt)
        .where((eb) =>
          swap.expectedLastScheduledAt === null
            ? eb('last_scheduled_at', 'is', null)
            : eb('last_scheduled_at', '=', swap.expectedLastScheduledAt),
        )
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) !== 1) return false;
      // If the occurrence already has a run, the state still moves past it: a schedule must
      // never stay behind an occurrence it cannot claim (that would stop it for good).
      const inserted = await trx
        .insertInto('runs')
        .values(run)
        .onConflict((oc) => oc.columns(['tenant', 'project', 'name', 'scheduled_for']).doNothing())
        .executeTakeFirst();
      return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1;
    });
  }
}
