import { performance } from 'node:perf_hooks';
import { setImmediate } from 'node:timers/promises';
import type { EffectiveScheduler } from '../catalog/catalog.js';
import type { RunBudget } from '../decisions/budget.js';
import { newProcessId } from '../runs/ids.js';
import type { PendingRun, StartedProcess } from '../runs/run.js';
import { startRun } from '../runs/transitions.js';
import { schedulerKeyString } from '../store/schedules.js';
import type { Session } from '../store/sessions.js';
import { budgetOf } from './budget.js';
import type { Runtime } from './context.js';
import type { Dispatch, DispatchContext } from './dispatch-context.js';
import { enter, type Launching, retentionOf } from './enter.js';
import { laneBounds } from './registrar.js';
import { openingOf, projectKey, runParams } from './run-records.js';

/** A run of a batch as its start transaction records it. */
interface Starting {
  readonly run: StartedProcess;
  readonly held: PendingRun;
  readonly scheduler: EffectiveScheduler;
  readonly params: Record<string, unknown>;
}

/**
 * One batch (issue #4): cron runs that start at one instant `dueAt` (their occurrence, or later by
 * their scheduler's jitter: `fire-instant.ts`), whose engines are registered.
 * What does not depend on the start instant (the system sessions, the run-log retention) is read
 * first; then, just before the occurrence (by the start transaction's recent duration,
 * `StartLead`), one transaction starts the lot whose lanes are free, with their processes and
 * START lines, as of the occurrence's instant; from there they go on as every started recipe run
 * does (`enter.ts`: the engines entered at the instant, the pending run logs after). A lane that frees within that
 * lead, and a run its lane must judge (a busy lane, a scheduler withdrawn, an earlier manual
 * fire), is admitted one at a time (`startSingly`), as is every run of a batch the store failed.
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
  let starting: Starting[] = [];
  let outcomes: Awaited<ReturnType<typeof repos.lanes.startMany>> | undefined;
  let retention: ReadonlyMap<string, number>;
  try {
    const sessions = await systemSessions(rt, items);
    retention = await retentionOf(ctx, items);
    // A project with a run budget has its runs admitted one at a time, counted under its lock.
    const budgets = new Map<string, RunBudget | undefined>();
    for (const { run } of items) {
      const key = projectKey(run);
      if (!budgets.has(key)) budgets.set(key, await budgetOf(ctx, run));
    }
    if (!(await ctx.drain.until(dueAt - ctx.lead.ms(items.length)))) {
      // Stopped past the grace period: the runs stay claimed, and the next worker starts them.
      release();
      return;
    }
    await ctx.ends.written(items.map(({ run }) => run));
    outcomes = await ctx.starts.run(async () => {
      // A turn of the event loop between two starts: on SQLite, whose statements hold the loop,
      // dozens of batches due at one instant would otherwise keep the lease's renewal waiting.
      await setImmediate();
      // Fenced, or the drain's final stop came while this batch awaited the store or its turn:
      // the runs stay claimed, for this worker once it renews its lease, or for the next one.
      if (!ctx.lease.held || ctx.drain.stopped.aborted) return undefined;
      const began = performance.now();
      // The instant the engines are entered, written with the start (a lead ahead of it).
      const at = Math.max(dueAt, clock.now());
      starting = items.map(({ run, scheduler }) => ({
        run: startRun(run, { sessionId: sessionOf(sessions, run), processId: newProcessId(), at }),
        held: run,
        scheduler,
        params: runParams(scheduler),
      }));
      const started = await repos.lanes.startMany(
        starting.map(({ run, scheduler, params }) => ({
          key: run,
          correlationId: run.correlationId,
          workerId: ctx.workerId,
          policy: scheduler.definition.overlap,
          oneShot: false,
          bounds: laneBounds(scheduler.definition),
          budget: budgets.get(projectKey(run)),
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
      return started;
    });
    if (outcomes === undefined) {
      release();
      return;
    }
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
      launch.push({ ...entry, run, controller: ctx.processes.register(run.processId), opened: 'running' });
    }
  }
  if (launch.length === 0) return;
  const overran = clock.now() - dueAt;
  if (overran > 0)
    log.debug(
      { runs: launch.length, overranMs: overran, leadMs: ctx.lead.ms(launch.length) },
      'batch start overran its lead',
    );
  await enter(
    ctx,
    launch,
    dueAt,
    (run, course) => ctx.track(course.finally(() => ctx.inflight.delete(run.correlationId))),
    retention,
  );
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
