import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { EffectiveScheduler } from '../catalog/catalog.js';
import type { FencedRun, PendingRun, StartedProcess } from '../runs/run.js';
import { startRun } from '../runs/transitions.js';
import { schedulerKeyString } from '../store/schedules.js';
import type { Session } from '../store/sessions.js';
import type { Runtime } from './context.js';
import { type Dispatch, type DispatchContext, persist } from './dispatch-context.js';
import { MAX_WAIT_MS } from './drain.js';
import { callEngine } from './engine-call.js';
import { launched } from './launch.js';
import { openingOf, projectKey, runParams } from './run-records.js';

/** A run of a batch as its start transaction records it. */
interface Starting {
  readonly run: StartedProcess;
  readonly held: PendingRun;
  readonly scheduler: EffectiveScheduler;
  readonly params: Record<string, unknown>;
}

/** A run of a batch its start transaction started, registered as running here. */
interface Launching extends Starting {
  readonly run: FencedRun<string>;
  readonly controller: AbortController;
}

/**
 * One batch (issue #4): cron runs of one occurrence instant `dueAt`, whose engines are registered.
 * What does not depend on the start instant (sessions, retention) is read first; then, just
 * before the occurrence (by the start transaction's recent duration, `StartLead`), one
 * transaction starts the lot, with their processes and START lines, as of the occurrence's
 * instant; at it every engine is entered; the pending run logs are written last, off the start's
 * path. A lane that frees within that lead, and a run its lane must judge (a scheduler withdrawn,
 * an earlier manual fire), is decided at the instant by the single path (`startSingly`), as is
 * every run of a batch the store failed.
 */
export async function startBatch(
  ctx: DispatchContext,
  items: readonly Dispatch[],
  dueAt: number,
  startSingly: (item: Dispatch) => void,
): Promise<void> {
  const { rt } = ctx;
  const { repos, clock, log } = rt;
  const release = () => {
    for (const { run } of items) ctx.inflight.delete(run.correlationId);
  };
  let starting: Starting[];
  let outcomes: Awaited<ReturnType<typeof repos.lanes.startMany>>;
  const retention = new Map<string, number>();
  try {
    const sessions = await systemSessions(rt, items);
    for (const { run } of items) {
      const key = projectKey(run);
      if (!retention.has(key)) retention.set(key, await ctx.recorder.retentionDays(run.tenant, run.project));
    }
    if (!(await ctx.drain.until(dueAt - ctx.lead.ms(items.length)))) {
      // Stopped past the grace period: the runs stay claimed, and the next worker starts them.
      release();
      return;
    }
    await ctx.ends.written(items.map(({ run }) => run));
    // Fenced, or the drain's final stop came while this batch awaited the store: the runs stay
    // claimed, for this worker once it renews its lease, or for the next one.
    if (!ctx.lease.held || ctx.drain.stopped.aborted) {
      release();
      return;
    }
    const began = performance.now();
    // The instant the engines are entered, written with the start (a lead ahead of it).
    const at = Math.max(dueAt, clock.now());
    starting = items.map(({ run, scheduler }) => ({
      run: startRun(run, { sessionId: sessionOf(sessions, run), processId: `proc_${randomUUID()}`, at }),
      held: run,
      scheduler,
      params: runParams(scheduler),
    }));
    outcomes = await repos.lanes.startMany(
      starting.map(({ run, scheduler, params }) => ({
        key: run,
        correlationId: run.correlationId,
        workerId: ctx.workerId,
        policy: scheduler.definition.overlap,
        oneShot: false,
        trigger: run.trigger,
        scheduledFor: run.scheduledFor,
        start: { sessionId: run.sessionId, processId: run.processId, at },
        // Its process and START line with it: a run whose engine is entered has both (issue #20).
        opening: openingOf(run, scheduler, params, 'running'),
      })),
      ctx.workerId,
      at,
    );
    ctx.lead.observe(performance.now() - began, items.length);
  } catch (error) {
    // The store failed the batch: nothing of it was written; the single path retries each run.
    log.warn({ err: error, runs: items.length }, 'batch start failed; starting one run at a time');
    for (const item of items) startSingly(item);
    return;
  }
  const launch: Launching[] = [];
  for (const [i, entry] of starting.entries()) {
    const outcome = outcomes[i];
    // Not started here: the single path decides with the policy (or finds the run is not ours).
    if (outcome === 'deferred' || outcome === undefined)
      startSingly({ run: entry.held, scheduler: entry.scheduler });
    // Registered before any await: a stop request from now on finds the process here.
    else {
      const { sessionId, processId, startedAt } = entry.run;
      const run = startRun(entry.held, { sessionId, processId, at: startedAt }, outcome);
      launch.push({ ...entry, run, controller: ctx.processes.register(run.processId) });
    }
  }
  if (launch.length > 0) await enter(ctx, launch, dueAt, retention);
}

// Started durably a lead ahead, with their processes and START lines, so the engines are entered
// at the occurrence itself (a crash in between ends the runs worker-lost, as one right after the
// commit would); each run's start is that instant.
async function enter(
  ctx: DispatchContext,
  launch: readonly Launching[],
  dueAt: number,
  retention: ReadonlyMap<string, number>,
): Promise<void> {
  const { clock, log } = ctx.rt;
  const overran = clock.now() - dueAt;
  if (overran > 0)
    log.debug(
      { runs: launch.length, overranMs: overran, leadMs: ctx.lead.ms(launch.length) },
      'batch start overran its lead',
    );
  await reach(clock, dueAt);
  // Their pending run logs are written meanwhile, and each run's end waits for them (a crash in
  // between ends the runs worker-lost, and the feed keeps the trace: spec §9a).
  let recordedNow: () => void = () => {};
  const recorded = new Promise<void>((resolve) => {
    recordedNow = resolve;
  });
  // Every engine is entered before any run's bookkeeping is chained, so a run's start is not
  // delayed by the promises of the runs entered before it.
  const entered = launch.map((entry) => ({
    ...entry,
    running: callEngine(ctx, entry.run, entry.scheduler, entry.params, entry.controller),
  }));
  // Runs whose engine already returned: their end writes the final run log, so no pending one.
  const returned = new Set<string>();
  for (const { run, scheduler, running } of entered) {
    const done = () => returned.add(run.correlationId);
    running.then(done, done);
    ctx.track(
      launched(ctx, run, scheduler, running, recorded).finally(() => ctx.inflight.delete(run.correlationId)),
    );
  }
  await confirmAttempts(ctx, entered)
    .then((ours) => writePendingLogs(ctx, ours, retention, returned))
    .catch((error: unknown) =>
      log.error({ err: error, runs: entered.length }, 'could not write the pending run logs of a batch'),
    )
    .finally(recordedNow);
}

// The system sessions of the batch's schedulers, by scheduler key: first fires get their first
// session together; then a changed runAs (rare) one at a time.
async function systemSessions(rt: Runtime, items: readonly Dispatch[]): Promise<Map<string, Session>> {
  const { repos, clock } = rt;
  const keys = items.map(({ run }) => run);
  let sessions = await repos.sessions.currentSystemSessions(keys);
  const firsts = keys.filter((run) => !sessions.has(schedulerKeyString(run)));
  if (firsts.length > 0) {
    await repos.sessions.createFirstSystemSessions(firsts, clock.now());
    sessions = await repos.sessions.currentSystemSessions(keys);
  }
  for (const { run } of items) {
    const key = schedulerKeyString(run);
    if (sessions.get(key)?.ownerUser !== run.runAs)
      sessions.set(
        key,
        await repos.sessions.systemSession(run.tenant, run.project, run.name, run.runAs, clock.now()),
      );
  }
  return sessions;
}

// The system session of a run of the batch (every one was read or made by `systemSessions`).
function sessionOf(sessions: ReadonlyMap<string, Session>, run: PendingRun): string {
  const session = sessions.get(schedulerKeyString(run));
  if (session === undefined) throw new Error(`no system session for scheduler ${run.name}`);
  return session.id;
}

// Once the engines are entered (no query between the start and the instant): the attempts that
// are still this worker's. One whose lease was taken over meanwhile (another worker ended the
// run) has its process stopped at once (decisions §5 fencing); returns the others.
async function confirmAttempts<T extends { run: FencedRun; controller: AbortController }>(
  ctx: DispatchContext,
  entered: readonly T[],
): Promise<T[]> {
  const ours = await persist(ctx, "the check of a batch's attempts", () =>
    ctx.rt.repos.lanes.currentAttempts(
      entered.map(({ run }) => ({ correlationId: run.correlationId, fencingToken: run.fencingToken })),
    ),
  );
  const mine = entered.filter(({ run }) => ours.has(run.correlationId));
  for (const { run, controller } of entered)
    if (!ours.has(run.correlationId)) controller.abort('worker-lost');
  return mine;
}

// The batch's pending run logs (its processes and START lines came with its start), retried
// while the store fails, so that the runs' ends find them (issue #12).
async function writePendingLogs(
  ctx: DispatchContext,
  launched: readonly Launching[],
  retention: ReadonlyMap<string, number>,
  returned: ReadonlySet<string>,
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
  await persist(ctx, 'the pending run logs of a batch', () => ctx.rt.repos.documents.createMissing(logs));
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
