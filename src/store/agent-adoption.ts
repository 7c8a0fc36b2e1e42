import { sql } from 'kysely';
import { takeFencingTokens } from './fencing.js';
import { lockLane } from './lane-checks.js';
import { type Attempt, attemptOf } from './lane-records.js';
import type { Store } from './open.js';
import type { SchedulerKey } from './schedules.js';

/** An agent run of a lost worker that another worker takes over (decisions §5). Instants are UTC ms. */
export interface AdoptionRequest {
  /** The run's scheduler: the new token is taken under its lock, as every attempt's. */
  readonly key: SchedulerKey;
  readonly correlationId: string;
  /** The worker the run was read with (null: none), and the fencing token of its attempt. */
  readonly fromWorker: string | null;
  readonly fencingToken: number;
  /** The adopting worker. */
  readonly workerId: string;
}

/**
 * Adopts an agent run whose worker was lost (decisions §5, issue #25): in one transaction under
 * the scheduler's lock, the run — still started, still the lost worker's at the attempt it was
 * read with, and handed to its service — moves to
 * the adopting worker with the next attempt number and a new fencing token, and its agent row
 * follows (the credential, the service's reference and its last word stay). Each check is a
 * compare-and-swap, so of several workers reaping at once one adopts the run.
 *
 * @returns the new attempt, or undefined when the run was not adopted (another worker moved or
 *   ended it first).
 * @throws a store error: nothing was moved.
 */
export function adoptAgentRun(store: Store, request: AdoptionRequest): Promise<Attempt | undefined> {
  return store.db.transaction().execute(async (trx) => {
    await lockLane(trx, store.dialect, request.key, false);
    const handedOff = await trx
      .selectFrom('agent_runs')
      .select('correlation_id')
      .where('correlation_id', '=', request.correlationId)
      .where('fencing_token', '=', request.fencingToken)
      .where('reference', 'is not', null)
      .executeTakeFirst();
    if (handedOff === undefined) return undefined;
    const [token] = await takeFencingTokens(trx, store.dialect, [request.key]);
    const moved = await trx
      .updateTable('runs')
      .set({ worker_id: request.workerId, attempt: sql<number>`attempt + 1`, fencing_token: token })
      .where('correlation_id', '=', request.correlationId)
      .where('state', '=', 'started')
      .where('fencing_token', '=', request.fencingToken)
      .where((eb) =>
        request.fromWorker === null ? eb('worker_id', 'is', null) : eb('worker_id', '=', request.fromWorker),
      )
      .returning(['attempt', 'fencing_token'])
      .executeTakeFirst();
    if (moved === undefined) return undefined;
    const attempt = attemptOf(moved);
    await trx
      .updateTable('agent_runs')
      .set({ attempt: attempt.attempt, fencing_token: attempt.fencingToken })
      .where('correlation_id', '=', request.correlationId)
      .where('fencing_token', '=', request.fencingToken)
      .execute();
    return attempt;
  });
}
