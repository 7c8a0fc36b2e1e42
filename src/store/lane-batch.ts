import { sql } from 'kysely';
import { decideOverlap } from '../decisions/overlap.js';
import { takeFencingTokens } from './fencing.js';
import { planByKeys } from './key-plans.js';
import { type Attempt, attemptOf, type LaneRequest, lockKeyOf, writeOpenings } from './lane-records.js';
import type { Store } from './open.js';
import { DISABLED_TIMING_PATTERN, schedulerKeyString } from './schedules.js';
import { subplanFence } from './subplan.js';
import { keyIn, valuesList } from './values.js';

/*
 * The batch start of a scheduler's lane (issue #4): the runs of a due second whose lane is free,
 * started in one transaction and one UPDATE instead of one admission each. Behind
 * `Lanes.startMany` (`src/store/lanes.ts`), which documents it; whatever it leaves `deferred`
 * goes through `Lanes.admit` one at a time.
 */

/** The batch start of `Lanes.startMany`, over `store`. */
export async function startFreeLanes(
  store: Store,
  starts: readonly LaneRequest[],
  workerId: string,
  at: number,
): Promise<(Attempt | 'deferred')[]> {
  const free = { oneShot: false, active: false, waiting: false } as const;
  const seen = new Set<string>();
  const chosen = starts.filter((request) => {
    const key = schedulerKeyString(request.key);
    // Bounds and budgets need their counts under a lock: `Lanes.admit` decides such a run.
    if (request.bounds !== undefined || request.budget !== undefined) return false;
    if (seen.has(key) || decideOverlap({ ...free, policy: request.policy }) !== 'start') return false;
    seen.add(key);
    return true;
  });
  if (chosen.length === 0) return starts.map(() => 'deferred');
  const ids = chosen.map((request) => request.correlationId);
  const started = await store.db.transaction().execute(async (trx) => {
    await planByKeys(trx, store.dialect);
    if (store.dialect === 'postgres') {
      await sql`select pg_advisory_xact_lock(hashtext(k)) from (select unnest(${sql.val([...seen].sort().map(lockKeyOf))}::text[]) as k order by k) as ordered`.execute(
        trx,
      );
    }
    const tokens = await takeFencingTokens(
      trx,
      store.dialect,
      chosen.map((request) => request.key),
    );
    // Which of them may start, each looked up (and locked) by its key: a busy lane, an earlier
    // manual fire not judged yet, a scheduler without schedule state (deleted) or disabled is
    // left to the one-at-a-time path, which decides and records it. The run's state and holder
    // are compared as expressions, so that no index on them is a way in: before a top of the hour
    // claimed ahead a worker holds tens of thousands of claimed runs, and on statistics that
    // predate them PostgreSQL walked all of them for each batch (issue #24); SQLite likewise
    // walked this worker's claimed runs with the whole list for each (issue #11).
    const passing = await sql<{ correlation_id: string }>`
      select runs.correlation_id as correlation_id from runs
      where ${keyIn(store.dialect, sql`runs.correlation_id`, ids)}
        and (runs.state || '') in ('claimed', 'queued') and (runs.worker_id || '') = ${workerId}
        and not exists (
          select 1 from runs as other
          where other.tenant = runs.tenant and other.project = runs.project and other.name = runs.name
            and other.state in ('started', 'queued', 'claimed') and other.correlation_id <> runs.correlation_id
            and (other.state <> 'claimed'
              or (other.trigger = 'manual' and other.scheduled_for < runs.scheduled_for))
          ${subplanFence(store.dialect)})
        and exists (
          select 1 from schedule_state as s
          where s.tenant = runs.tenant and s.project = runs.project and s.name = runs.name
            and (s.timing is null or s.timing not like ${DISABLED_TIMING_PATTERN}))
      ${store.dialect === 'postgres' ? sql`for update of runs` : sql``}`.execute(trx);
    const startable = new Set(passing.rows.map((r) => r.correlation_id));
    const rows = chosen.flatMap((request, i) =>
      startable.has(request.correlationId)
        ? [[request.correlationId, request.start.sessionId, request.start.processId, tokens[i]]]
        : [],
    );
    if (rows.length === 0) return new Map<string, Attempt>();
    // Rows this transaction holds: moved by key alone.
    const moved = await sql<{ correlation_id: string; attempt: number; fencing_token: string | number }>`
      update runs
      set state = 'started', session_id = v.column2, process_id = v.column3, started_at = ${at},
        attempt = runs.attempt + 1, fencing_token = v.column4
      from ${valuesList(store.dialect, rows, ['text', 'text', 'text', 'bigint'])} as v
      where runs.correlation_id = v.column1
        and ${keyIn(
          store.dialect,
          sql`runs.correlation_id`,
          rows.map(([id]) => id as string),
        )}
      returning runs.correlation_id as correlation_id, runs.attempt as attempt,
        runs.fencing_token as fencing_token`.execute(trx);
    const attempts = new Map(moved.rows.map((r) => [r.correlation_id, attemptOf(r)]));
    await writeOpenings(
      trx,
      store.dialect,
      chosen.flatMap((request) =>
        attempts.has(request.correlationId) && request.opening !== undefined ? [request.opening] : [],
      ),
    );
    return attempts;
  });
  return starts.map((request) => started.get(request.correlationId) ?? 'deferred');
}
