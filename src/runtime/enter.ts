import type { EffectiveScheduler } from '../catalog/catalog.js';
import type { FencedRun } from '../runs/run.js';
import type { Runtime } from './context.js';
import { type DispatchContext, persist } from './dispatch-context.js';
import { MAX_WAIT_MS } from './drain.js';
import { callEngine } from './engine-call.js';
import { launched } from './launch.js';
import { projectKey } from './run-records.js';

/**
 * A recipe run its lane started (its process row and START line written with its start), with
 * what its engine gets, registered as running here (`controller`) before anything was awaited.
 */
export interface Launching {
  readonly run: FencedRun<string>;
  readonly scheduler: EffectiveScheduler;
  readonly params: Record<string, unknown>;
  readonly controller: AbortController;
  /**
   * The status its start wrote its process with. `running` (since the start instant) for a batch's
   * runs, whose engines are entered at that instant, right after the start: their attempts are
   * confirmed once the engines are entered, so nothing delays the entry. `ready` for a run started
   * one at a time, whose start may have stalled between its commit and its entry: its engine is
   * entered only once its process moves to `running`, a compare-and-swap that fails for an attempt
   * another worker took over meanwhile (decisions §5 fencing).
   */
  readonly opened: 'ready' | 'running';
}

/**
 * The one way started recipe runs go on, whether a batch started them or their admission did (a
 * single start is a batch of one): at `dueAt` (UTC ms; at once when it is past) every engine is
 * entered, before any run's bookkeeping; each run's course from there ({@link launched}) is handed
 * to `ended` at once; the attempts not confirmed before their entry (see `Launching.opened`) are
 * then checked to be still this worker's (one lost meanwhile is stopped), and the pending run
 * logs are written, off the start's path. Each run's end waits
 * for those logs. Resolves once they are written (or could not be: logged).
 *
 * @param ended receives, per run and synchronously, the promise of its course until its end.
 * @param retention the run-log retention of the runs' projects (days, by `projectKey`) where the
 *   caller read it ahead ({@link retentionOf}): a batch, so that no read follows its instant.
 */
export async function enter(
  ctx: DispatchContext,
  launch: readonly Launching[],
  dueAt: number,
  ended: (run: FencedRun<string>, course: Promise<void>) => void,
  retention: ReadonlyMap<string, number> = new Map(),
): Promise<void> {
  const { clock, log } = ctx.rt;
  await reach(clock, dueAt);
  // Their pending run logs are written meanwhile, and each run's end waits for them (a crash in
  // between ends the runs worker-lost, and the feed keeps the trace: spec §9a).
  let recordedNow: () => void = () => {};
  const recorded = new Promise<void>((resolve) => {
    recordedNow = resolve;
  });
  // Every engine is entered before any run's bookkeeping is chained, so a run's start is not
  // delayed by the promises of the runs entered before it.
  const entered = launch.map((entry) => {
    let tell: (entered: boolean) => void = () => {};
    const entering = new Promise<boolean>((resolve) => {
      tell = resolve;
    });
    return { ...entry, running: callEngine(ctx, entry, tell), entering };
  });
  // Runs whose engine already returned: their end writes the final run log, so no pending one.
  const returned = new Set<string>();
  for (const { run, scheduler, running, entering } of entered) {
    const done = () => returned.add(run.correlationId);
    // A run handed to an agent service (issue #25) goes on: its pending log is written as any other's.
    running.then((result) => result.status !== 'accepted' && done(), done);
    ended(run, launched(ctx, run, scheduler, running, recorded, entering));
  }
  await confirmAttempts(ctx, entered)
    .then(async (ours) => writePendingLogs(ctx, ours, returned, await retentionOf(ctx, ours, retention)))
    .catch((error: unknown) =>
      log.error({ err: error, runs: entered.length }, 'could not write the pending run logs of a start'),
    )
    .finally(recordedNow);
}

// Once the engines are entered (no query between the start and the instant): the attempts that
// are still this worker's. One whose lease was taken over meanwhile (another worker ended the
// run) has its process stopped at once (decisions §5 fencing); returns the others.
async function confirmAttempts<T extends Launching>(
  ctx: DispatchContext,
  entered: readonly T[],
): Promise<T[]> {
  if (entered.every(({ opened }) => opened === 'ready')) return [...entered];
  const ours = await persist(ctx, 'the check of started attempts', () =>
    ctx.rt.repos.lanes.currentAttempts(
      entered.map(({ run }) => ({ correlationId: run.correlationId, fencingToken: run.fencingToken })),
    ),
  );
  for (const { run, controller } of entered)
    if (!ours.has(run.correlationId)) controller.abort('worker-lost');
  return entered.filter(({ run }) => ours.has(run.correlationId));
}

// The pending run logs (the processes and START lines came with the start), retried while the
// store fails, so that the runs' ends find them (issue #12).
async function writePendingLogs(
  ctx: DispatchContext,
  launched: readonly Launching[],
  returned: ReadonlySet<string>,
  retention: ReadonlyMap<string, number>,
): Promise<void> {
  // One turn of the event loop first: an engine that returns at once (noop) has by then.
  await new Promise((resolve) => setImmediate(resolve));
  // A run that already ended has its final log (the end writes it whole): this one yields to it,
  // and one whose engine returned meanwhile is not rendered at all (a crash before its end is
  // written leaves its START line, and the recovery writes its log: spec §9a).
  const logs = launched.flatMap(({ run, scheduler }) => {
    if (returned.has(run.correlationId)) return [];
    const row = ctx.recorder.runLogRow(run, scheduler, retention.get(projectKey(run)) ?? -1, run.startedAt);
    return row === undefined ? [] : [row];
  });
  await persist(ctx, 'the pending run logs of a start', () => ctx.rt.repos.documents.createMissing(logs));
  // A run whose log was written before its start (a manual fire, a backfill occurrence, a run that
  // waited in its lane, a retry) has it rewritten now, while it is still this started attempt
  // (issue #23: its log said TRIGGERED or QUEUED until the run ended).
  for (const { run, scheduler } of launched) {
    if (returned.has(run.correlationId) || !loggedBeforeStart(run)) continue;
    await persist(ctx, 'the run log of a start', () => ctx.recorder.writeRunLog(run, undefined, scheduler));
  }
}

/** Whether a run's log was written before its start: anything but a scheduled occurrence's first attempt. */
function loggedBeforeStart(run: Launching['run']): boolean {
  return run.trigger === 'manual' || run.trigger === 'backfill' || run.queuedAt !== null || run.attempt > 1;
}

/**
 * A run started one at a time (an admission's start, a retry's next attempt), entered as a batch
 * of one: its process registered before any await (a stop request from then on finds it here), its
 * engine entered once its process moves to `running`, and its course awaited to the run's end
 * (whose failure the caller handles). `at` is the start instant, UTC ms.
 */
export async function enterOne(
  ctx: DispatchContext,
  run: FencedRun<string>,
  scheduler: EffectiveScheduler,
  params: Record<string, unknown>,
  at: number,
): Promise<void> {
  const controller = ctx.processes.register(run.processId);
  const courses: Promise<void>[] = [];
  await enter(ctx, [{ run, scheduler, params, controller, opened: 'ready' }], at, (_, course) => {
    courses.push(course);
    // Awaited below, once the pending run log is written: not an unhandled rejection meanwhile.
    course.catch(() => {});
  });
  await Promise.all(courses);
}

/**
 * The run-log retention (days) of the projects of `runs`, by `projectKey`: what `known` has, and
 * the rest read from the settings cascade.
 */
export async function retentionOf(
  ctx: DispatchContext,
  runs: readonly { readonly run: Pick<FencedRun, 'tenant' | 'project'> }[],
  known: ReadonlyMap<string, number> = new Map(),
): Promise<ReadonlyMap<string, number>> {
  const retention = new Map(known);
  for (const { run } of runs) {
    const key = projectKey(run);
    if (!retention.has(key)) retention.set(key, await ctx.recorder.retentionDays(run.tenant, run.project));
  }
  return retention;
}

/**
 * Resolves once `clock` reaches `instant` (UTC ms), to the millisecond: a timer to
 * {@link SPIN_MS} before it, then turns of the event loop. A process woken from a timer may run a
 * millisecond or two late (the timer's own rounding, and the OS scheduling a sleeping process on
 * a busy machine); one that is already running is not.
 */
async function reach(clock: Runtime['clock'], instant: number): Promise<void> {
  for (let ms = instant - clock.now(); ms > 0; ms = instant - clock.now())
    await new Promise((resolve) =>
      ms > SPIN_MS ? setTimeout(resolve, Math.min(ms - SPIN_MS, MAX_WAIT_MS)) : setImmediate(resolve),
    );
}

/** How long before an instant {@link reach} stops sleeping and turns the event loop, milliseconds. */
const SPIN_MS = 3;
