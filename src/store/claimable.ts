import type { Kysely } from 'kysely';
import { heldByDead, type Liveness } from './liveness.js';
import type { Database } from './schema.js';

/** A worker claiming due occurrences, and how it tells which other workers are live (decisions §5). */
export interface Claimer {
  readonly workerId: string;
  readonly others: Liveness;
}

/**
 * The states due at `instant` that `claimer` may claim, oldest first, at most `limit`: those
 * with no run claimed, queued or started by another live worker (issue #24). The worker that
 * holds a scheduler's active run claims its next occurrence and judges its overlap with what it
 * knows of that run (one it has ended but not yet recorded is no overlap); any worker claims it
 * once that run has ended, or its worker is lost. So two live workers never collide on one
 * scheduler's consecutive occurrences. A manual fire waiting for a worker (none) holds nothing.
 */
export function claimableDue(db: Kysely<Database>, instant: number, limit: number, claimer: Claimer) {
  return db
    .selectFrom('schedule_state')
    .selectAll('schedule_state')
    .where('next_run_at', 'is not', null)
    .where('next_run_at', '<=', instant)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('runs')
            .select('runs.correlation_id')
            .whereRef('runs.tenant', '=', 'schedule_state.tenant')
            .whereRef('runs.project', '=', 'schedule_state.project')
            .whereRef('runs.name', '=', 'schedule_state.name')
            .where('runs.state', 'in', ['claimed', 'queued', 'started'])
            .where('runs.worker_id', '<>', claimer.workerId)
            .where(not(heldByDead('runs.worker_id', claimer.others))),
        ),
      ),
    )
    .orderBy('next_run_at')
    .limit(limit);
}
