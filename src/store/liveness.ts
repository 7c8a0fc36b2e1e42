import { type RawBuilder, type SqlBool, sql } from 'kysely';

/**
 * Which workers a reap counts as live (decisions §5). It is no list read once: every statement
 * that acts on the work of dead workers decides, against the `workers` table as it is when that
 * statement runs, whose work it may take (see {@link heldByDead}). So a worker that registered or
 * renewed while a reap was busy (ending leftover processes can take seconds) is live for the rest
 * of that reap.
 *
 * - `lease`: live are the workers not stopped by `at` (UTC ms, the reap's start) whose heartbeat
 *   is at or after `since` (UTC ms: `at` less the lease and the takeover margin). A heartbeat only
 *   moves forward, so the workers a later statement of one reap counts as dead are among those an
 *   earlier one did: none whose leftover processes the reap did not look at first. A worker that
 *   stops (cleanly, or retired by another reap) after `at` counts as live to the end of the reap.
 * - `only`: every worker but `workerId` is dead (a SQLite store at start: its one serving process).
 */
export type Liveness =
  | { readonly kind: 'lease'; readonly at: number; readonly since: number }
  | { readonly kind: 'only'; readonly workerId: string };

/** The {@link Liveness} of a reap at `at` (UTC ms) where a heartbeat older than `deadAfterMs` is lost. */
export function leaseLiveness(at: number, deadAfterMs: number): Liveness {
  return { kind: 'lease', at, since: at - deadAfterMs };
}

/**
 * A condition, for a statement's `where`: the worker id in `column` (e.g. `r.worker_id`) names no
 * worker live by `liveness` at the moment the statement runs (a worker the store does not know is
 * not live). A null `column` is not matched: the caller says what a run without a worker means.
 */
export function heldByDead(column: string, liveness: Liveness): RawBuilder<SqlBool> {
  const worker = sql.ref(column);
  if (liveness.kind === 'only') return sql<SqlBool>`${worker} <> ${liveness.workerId}`;
  return sql<SqlBool>`${worker} not in (select w.id from workers w where w.heartbeat_at >= ${liveness.since} and (w.stopped_at is null or w.stopped_at > ${liveness.at}))`;
}
