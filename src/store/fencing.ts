import { sql, type Transaction } from 'kysely';
import type { StoreDialect } from './open.js';
import { type SchedulerKey, schedulerKeyString } from './schedules.js';
import type { Database } from './schema.js';
import { valuesList } from './values.js';

/*
 * Fencing tokens of run attempts (decisions §5).
 *
 * An attempt is each start of a run by a worker: its first start, the start of a run taken over
 * from a lost worker or promoted from the queue, each retry, and the adoption of an agent run. The
 * transaction that starts an attempt adds one to the run's `attempt` (1 for the first) and gives
 * it a new `fencing_token`, counted per scheduler (`scheduler_fencing`):
 *
 * - A later attempt of a scheduler always carries a larger token than every earlier attempt of
 *   that scheduler, and so of the same run: the starts of one scheduler take turns under its lock
 *   (a PostgreSQL advisory lock; SQLite has one writer at a time) and the token is taken inside
 *   it. A receiver that keeps the largest token it has seen for a scheduler and refuses a smaller
 *   one refuses every stale attempt. The count is kept when a scheduler is deleted, so one made
 *   again under its name goes on above it; values may be skipped (a start that rolled back).
 * - A scheduler's tokens say nothing of any other scheduler: a count over the whole store told
 *   whoever read a run log how many attempts other schedulers had started meanwhile — a hidden
 *   one's (spec §10b), another tenant's. Two schedulers' attempts may carry the same token; every
 *   write checks the token together with its run.
 *
 * Every write of a run after its start — its start record, its end, its process's transitions,
 * its pending run log — is conditioned on the token of the attempt that writes it: a worker whose
 * lease was taken over, whose run another worker ended or started again, writes nothing and
 * treats the run as no longer its own.
 */

/**
 * Takes the next fencing token of each of `keys`, distinct schedulers, in `trx` (which must hold
 * their lanes' locks): one statement, whose row locks on `scheduler_fencing` are held to the end
 * of `trx`. A scheduler's first token is one above the floor: the store-wide counter of the
 * tokens given out before they were counted per scheduler (`fencing_counter` on SQLite, the
 * `run_fencing_token` sequence on PostgreSQL; migration 0025), 0 on a store made since.
 *
 * @returns the tokens, in the order of `keys`.
 * @throws Error when `keys` names a scheduler twice (one statement moves each row once).
 */
export async function takeFencingTokens(
  trx: Transaction<Database>,
  dialect: StoreDialect,
  keys: readonly SchedulerKey[],
): Promise<number[]> {
  if (keys.length === 0) return [];
  const floor =
    dialect === 'postgres'
      ? sql`(select case when is_called then last_value else 0 end from run_fencing_token)`
      : sql`(select last_token from fencing_counter where id = 1)`;
  // `where true`: SQLite reads an ON after a bare SELECT's FROM as a join's.
  const taken = await sql<{ tenant: string; project: string; name: string; last_token: number | string }>`
    insert into scheduler_fencing (tenant, project, name, last_token)
    select v.column1, v.column2, v.column3, ${floor} + 1
    from ${valuesList(
      dialect,
      keys.map((k) => [k.tenant, k.project, k.name]),
      ['text', 'text', 'text'],
    )} as v where true
    on conflict (tenant, project, name) do update set last_token = scheduler_fencing.last_token + 1
    returning tenant, project, name, last_token`.execute(trx);
  const tokens = new Map(taken.rows.map((r) => [schedulerKeyString(r), Number(r.last_token)]));
  if (tokens.size !== keys.length) throw new Error('takeFencingTokens: each scheduler once per statement');
  return keys.map((k) => tokens.get(schedulerKeyString(k)) as number);
}

/** A fencing token as read from the store: PostgreSQL returns a bigint as a string. */
export function tokenOf(value: number | string | null): number | null {
  return value === null ? null : Number(value);
}

/** The attempt a write of a run belongs to: the run, and the fencing token of that attempt. */
export interface Fence {
  readonly correlationId: string;
  /** Null for a run that has not started (or started before tokens existed). */
  readonly fencingToken: number | null;
}

/** The fence of `run`'s attempt as this worker knows it. */
export function fenceOf(run: {
  readonly correlationId: string;
  readonly fencingToken: number | null;
}): Fence {
  return { correlationId: run.correlationId, fencingToken: run.fencingToken };
}
