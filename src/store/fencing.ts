import { type RawBuilder, sql, type Transaction } from 'kysely';
import type { StoreDialect } from './open.js';
import type { Database } from './schema.js';

/*
 * Fencing tokens of run attempts (decisions §5).
 *
 * An attempt is each start of a run by a worker: its first start, the start of a run taken over
 * from a lost worker or promoted from the queue, and each retry. The transaction that starts an
 * attempt (`Lanes.admit`, `Lanes.startMany`) adds one to the run's `attempt` (1 for the first)
 * and gives it a new `fencing_token`:
 *
 * - A later attempt of a scheduler always carries a larger token than every earlier attempt of
 *   that scheduler, and so of the same run: the starts of one scheduler take turns under its lock
 *   (a PostgreSQL advisory lock; SQLite has one writer at a time) and the token is taken inside
 *   it. A receiver that keeps the largest token it has seen for a resource and refuses a smaller
 *   one refuses every stale attempt.
 * - No two attempts in a store share a token, whichever schedulers they belong to, even once a
 *   run is deleted (a one-shot released after a start that never entered its engine). Between
 *   schedulers tokens grow with time, but two lanes starting at the same moment on PostgreSQL may
 *   take theirs in either order, and values may be skipped (a start that rolled back).
 * - The tokens come from a sequence on PostgreSQL (workers take values without waiting on each
 *   other) and from a counter row on SQLite (`fencing_counter`, moved in the starting
 *   transaction: SQLite's writers take turns).
 *
 * Every write of a run after its start — its start record, its end, its process's transitions,
 * its pending run log — is conditioned on the token of the attempt that writes it: a worker whose
 * lease was taken over, whose run another worker ended or started again, writes nothing and
 * treats the run as no longer its own.
 */

/** The token of the attempt at a 1-based place of a statement that starts several (see {@link reserveFencingTokens}). */
export type FencingTokenAt = (position: RawBuilder<unknown>) => RawBuilder<number>;

/**
 * Reserves the fencing tokens of up to `count` attempts that one statement of `trx` starts, and
 * returns the SQL of the token of the attempt at a 1-based `position`: the next value of the
 * store's sequence (PostgreSQL, taken per row by the statement), or the counter moved by `count`
 * here (SQLite: the positions of one statement get distinct tokens; unused ones are skipped).
 */
export async function reserveFencingTokens(
  trx: Transaction<Database>,
  dialect: StoreDialect,
  count: number,
): Promise<FencingTokenAt> {
  if (dialect === 'postgres') return () => sql<number>`nextval('run_fencing_token')`;
  const moved = await sql<{ last_token: number | string }>`
    update fencing_counter set last_token = last_token + ${count} returning last_token`.execute(trx);
  const base = Number(moved.rows[0]?.last_token) - count;
  return (position) => sql<number>`${base} + ${position}`;
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
