import type { Kysely, Selectable } from 'kysely';
import { heldByDead, type Liveness } from './liveness.js';
import type { Store, StoreDialect } from './open.js';
import type { Database, ScheduleStateTable } from './schema.js';
import { asSubplan } from './subplan.js';

// A scheduler's active run: what the partial index runs_active holds (migration 0023).
const ACTIVE = ['claimed', 'queued', 'started'];

// The runs of a worker whose scheduler's next occurrence it claims whatever the slot: those past
// their claim. Its claimed cron runs hold their scheduler's next occurrence back anyway (below),
// and before a top of the hour claimed ahead they are tens of thousands, which each claim of the
// stream would read again (issue #24).
const PAST_CLAIM = ['queued', 'started'];

/** A worker claiming due occurrences, and how it tells which other workers are live (decisions §5). */
export interface Claimer {
  readonly workerId: string;
  readonly others: Liveness;
  /**
   * The slots whose schedulers it claims (decisions/partition.ts, issue #24); undefined: every
   * slot. Whatever the slot, it claims an occurrence due before {@link stealBefore}.
   */
  readonly slots?: readonly number[];
  /** UTC ms: an occurrence due before it is claimed whatever its slot (its owner is lost or behind). */
  readonly stealBefore?: number;
}

/**
 * The states due at `instant` that `claimer` may claim, oldest first, at most `limit`: those of
 * its slots, those due before its `stealBefore`, and those whose run it holds past its claim
 * (started or queued); of these, those with no run claimed, queued or started by another live
 * worker, nor a cron run this worker claimed and has not started yet (issue #24). The worker that
 * holds a scheduler's active run claims its next occurrence and judges its overlap with what it
 * knows of that run (one it has ended but not yet recorded is no overlap); the owner of its slot
 * claims it once that run has ended, and any worker once its worker is lost. So two live workers
 * never collide on one scheduler's consecutive occurrences. A manual fire waiting for a worker
 * (none) holds nothing.
 */
export function claimableDue(
  db: Kysely<Database>,
  dialect: StoreDialect,
  instant: number,
  limit: number,
  claimer: Claimer,
) {
  return (
    db
      .selectFrom('schedule_state')
      .selectAll('schedule_state')
      .where('next_run_at', 'is not', null)
      .where('next_run_at', '<=', instant)
      // A SQLite store serves one process (decisions §5): it claims every slot.
      .$if(claimer.slots !== undefined && dialect === 'postgres', (q) =>
        q.where((eb) => {
          const slots = claimer.slots ?? [];
          return eb.or([
            // More workers than slots leaves some with none: they claim only the two below.
            ...(slots.length === 0 ? [] : [eb('slot', 'in', slots)]),
            eb('next_run_at', '<', claimer.stealBefore ?? 0),
            // Its own active run's next occurrence, whoever owns the slot now: it judges the overlap.
            // Uncorrelated, so PostgreSQL reads this worker's active runs once into a hash and
            // probes it per row, instead of a lookup for each row of the other slots.
            eb(
              eb.refTuple('schedule_state.tenant', 'schedule_state.project', 'schedule_state.name'),
              'in',
              eb
                .selectFrom('runs as own')
                .select(['own.tenant', 'own.project', 'own.name'])
                .where('own.worker_id', '=', claimer.workerId)
                .where('own.state', 'in', PAST_CLAIM)
                .$asTuple('tenant', 'project', 'name'),
            ),
          ]);
        }),
      )
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('runs')
              .select('runs.correlation_id')
              .whereRef('runs.tenant', '=', 'schedule_state.tenant')
              .whereRef('runs.project', '=', 'schedule_state.project')
              .whereRef('runs.name', '=', 'schedule_state.name')
              .where('runs.state', 'in', ACTIVE)
              .where(({ and, or, eb }) =>
                or([
                  and([
                    eb('runs.worker_id', '<>', claimer.workerId),
                    not(heldByDead('runs.worker_id', claimer.others)),
                  ]),
                  // Its own run of the scheduler still waits to start here: the next occurrence is
                  // claimed once it started, not beside it in the pipeline, where the two collide.
                  and([
                    eb('runs.worker_id', '=', claimer.workerId),
                    eb('runs.state', '=', 'claimed'),
                    eb('runs.trigger', '=', 'cron'),
                  ]),
                ]),
              )
              .$call(asSubplan(dialect)),
          ),
        ),
      )
      .orderBy('next_run_at')
      .limit(limit)
  );
}

/**
 * The schedule states of `slots` (every slot when undefined, and on SQLite, whose one process
 * claims every slot) whose next occurrence is in [`from`, `to`] (UTC ms), in the order
 * (next_run_at, tenant, project, name), the page after `after` (from the first when missing), at
 * most `limit`, as rows: the schedulers a worker prepares before their instant (issue #24).
 */
export function upcomingStates(
  store: Store,
  ...[from, to, after, limit, slots]: UpcomingPage
): Promise<Selectable<ScheduleStateTable>[]> {
  return store.db
    .selectFrom('schedule_state')
    .selectAll()
    .where('next_run_at', '>=', from)
    .where('next_run_at', '<=', to)
    .$if(slots !== undefined && store.dialect === 'postgres', (q) =>
      q.where('slot', 'in', slots?.length ? slots : [-1]),
    )
    .$if(after !== undefined, (q) =>
      q.where((eb) => {
        const a = after as UpcomingCursor;
        return eb(
          eb.refTuple('next_run_at', 'tenant', 'project', 'name'),
          '>',
          eb.tuple(a.nextRunAt, a.tenant, a.project, a.name),
        );
      }),
    )
    .orderBy('next_run_at')
    .orderBy('tenant')
    .orderBy('project')
    .orderBy('name')
    .limit(limit)
    .execute();
}

/** Where a page of {@link upcomingStates} starts after: a scheduler's key and its next occurrence (UTC ms). */
export interface UpcomingCursor {
  readonly tenant: string;
  readonly project: string;
  readonly name: string;
  readonly nextRunAt: number;
}

/** The page of {@link upcomingStates}: from, to (UTC ms), after, limit, slots. */
export type UpcomingPage = [
  from: number,
  to: number,
  after: UpcomingCursor | undefined,
  limit: number,
  slots: readonly number[] | undefined,
];

/**
 * How many schedulers of the whole store have their next occurrence at or before `to` (UTC
 * ms), counted up to `cap`: what a worker's fire-ahead window is sized by (issue #24). Read
 * from the index on next occurrence alone; a worker takes its slots' share of it.
 */
export async function countDue(store: Store, to: number, cap: number): Promise<number> {
  const row = await store.db
    .selectFrom((db) =>
      db
        .selectFrom('schedule_state')
        .select('next_run_at')
        .where('next_run_at', 'is not', null)
        .where('next_run_at', '<=', to)
        .limit(cap)
        .as('due'),
    )
    .select((eb) => eb.fn.countAll().as('count'))
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}
