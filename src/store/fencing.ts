import { type RawBuilder, sql } from 'kysely';
import type { StoreDialect } from './open.js';

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
 * - No two attempts in a store share a token, whichever schedulers they belong to. Between
 *   schedulers tokens grow with time, but two lanes starting at the same moment on PostgreSQL may
 *   take theirs in either order, and values may be skipped (a start that rolled back).
 * - The tokens come from a sequence on PostgreSQL (workers take values without waiting on each
 *   other) and from the largest token recorded on SQLite (runs are never deleted; an index makes
 *   it a lookup).
 *
 * Every write of a run after its start — its start record, its end, its process's transitions,
 * its pending run log — is conditioned on the token of the attempt that writes it: a worker whose
 * lease was taken over, whose run another worker ended or started again, writes nothing and
 * treats the run as no longer its own.
 */

/**
 * The fencing token of the attempt a statement starts: the next value of the store's sequence
 * (PostgreSQL), or the largest token recorded plus `position` (SQLite: `position` is the run's
 * 1-based place in a batch, so that the runs one statement starts get distinct tokens).
 */
export function nextFencingToken(
  dialect: StoreDialect,
  position: RawBuilder<unknown> = sql`1`,
): RawBuilder<number> {
  return dialect === 'postgres'
    ? sql<number>`nextval('run_fencing_token')`
    : sql<number>`(select coalesce(max(fencing_token), 0) from runs) + ${position}`;
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
