import { sql, type Transaction } from 'kysely';
import type { SchedulerStanding } from '../decisions/admission.js';
import { BUDGET_WINDOW_MS, type BudgetRefusal, budgetRefusal, type RunBudget } from '../decisions/budget.js';
import type { RunTrigger } from '../runs/run.js';
import { schedulerPath } from '../scheduler/paths.js';
import { TENANT_PROJECT } from './document-rows.js';
import { inboxHas, inboxRow, type NewInboxItem } from './inbox.js';
import { lockKeyOf } from './lane-records.js';
import type { StoreDialect } from './open.js';
import { runsStartedSince } from './runs-in-window.js';
import { isDisabledTiming, type SchedulerKey, schedulerKeyString } from './schedules.js';
import type { Database } from './schema.js';

/*
 * What a lane looks at, in the transaction of an admission (`Lanes.admit`) or of a retry
 * (`src/store/lane-retry.ts`): its locks, whether its scheduler is still there, its project's
 * run budget, and the once-per-window notice of a budget's refusal.
 */

/**
 * Takes the locks of an admission in `trx`: the project's (when `budgeted`: its run budget is
 * counted under it) before the scheduler's, always in this order. PostgreSQL: transaction-scoped
 * advisory locks (they need no row to exist); SQLite runs one write transaction at a time.
 */
export async function lockLane(
  trx: Transaction<Database>,
  dialect: StoreDialect,
  key: SchedulerKey,
  budgeted: boolean,
): Promise<void> {
  if (dialect !== 'postgres') return;
  const lock = (lockKey: string) => sql`select pg_advisory_xact_lock(hashtext(${lockKey}))`.execute(trx);
  if (budgeted) await lock(`budget/${key.tenant}/${key.project}`);
  await lock(lockKeyOf(schedulerKeyString(key)));
}

/**
 * Whether the scheduler of a run is still there at its admission: a scheduled run's schedule
 * state (a refresh removes it when the document is deleted, and records `enabled`); a manual
 * fire's document, in the project or `_tenant` (a manual fire needs no schedule state).
 */
export async function schedulerStanding(
  trx: Transaction<Database>,
  key: SchedulerKey,
  trigger: RunTrigger,
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

/** The budget's verdict on one more start of the project at `at` (UTC ms), counted under its lock. */
export async function overBudget(
  trx: Transaction<Database>,
  key: SchedulerKey,
  budget: RunBudget,
  at: number,
): Promise<BudgetRefusal | undefined> {
  const count = async (limit: number | undefined, refusal: BudgetRefusal) =>
    limit === undefined
      ? 0
      : runsStartedSince(trx, key.tenant, key.project, at - BUDGET_WINDOW_MS[refusal] + 1);
  return budgetRefusal(
    budget,
    await count(budget.runsPerHour, 'runs-per-hour'),
    await count(budget.runsPerDay, 'runs-per-day'),
  );
}

/**
 * Writes an inbox item unless its user has one of that kind and title: under the project's lock,
 * so that two admissions refused at once write one.
 */
export async function notifyOnce(trx: Transaction<Database>, item: NewInboxItem): Promise<void> {
  if (!(await inboxHas(trx, item.tenant, item.user, item.kind, item.title)))
    await trx.insertInto('inbox').values(inboxRow(item)).execute();
}
