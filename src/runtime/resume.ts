import { type EffectiveScheduler, loadProjectSchedulers } from '../catalog/catalog.js';
import type { Run } from '../store/runs.js';
import { schedulerKeyString } from '../store/schedules.js';
import type { Runtime } from './context.js';
import type { Dispatch } from './dispatch-context.js';
import type { Executor } from './executor.js';
import { projectKey } from './run-records.js';

/** What {@link resumeClaimed} dispatched. */
export interface Resumed {
  /** Runs dispatched here. */
  readonly resumed: number;
  /** Of those, manual fires: runs no worker held (routine, not the work of a lost worker). */
  readonly manualFires: number;
}

/** How {@link resumeClaimed} treats its runs. */
export interface ResumeOptions {
  /**
   * Take the runs over first (each from the worker it was read with, a compare-and-swap): the
   * runs of lost workers and manual fires. False for runs this worker holds already.
   */
  readonly takeOver: boolean;
  /** True once the worker is stopping: nothing more is taken over or dispatched (checked between steps). */
  readonly stopping: () => boolean;
}

/**
 * Resumes claimed runs that no dispatch carries (decisions §5) in a few queries for the lot, not
 * several per run: the effective schedulers of their projects are loaded once per project
 * ({@link loadProjectSchedulers} with the runs' names), the runs are taken over in one statement
 * per previous worker, and the cron runs go to {@link Executor.startMany} (one start transaction
 * per occurrence instant); manual fires go one at a time, as a manual fire does. A run taken over
 * whose scheduler is gone (document deleted or no longer valid) ends failed, reason
 * `scheduler-gone`; one of this worker's own is left as it is.
 *
 * Each run is dispatched at most once: the takeover and the start are compare-and-swaps on the
 * run's state and worker. A store error while loading the schedulers propagates before any run is
 * taken over.
 *
 * @param runs claimed runs, as read (their `workerId` is the one a takeover compares with).
 */
export async function resumeClaimed(
  rt: Runtime,
  executor: Executor,
  runs: readonly Run[],
  options: ResumeOptions,
): Promise<Resumed> {
  if (runs.length === 0 || options.stopping()) return { resumed: 0, manualFires: 0 };
  const schedulers = await effectiveSchedulers(rt, runs);
  if (options.stopping()) return { resumed: 0, manualFires: 0 };
  let held = runs;
  if (options.takeOver) {
    const taken = await rt.repos.runs.takeOverMany(runs, 'claimed', executor.workerId);
    held = runs.filter((run) => taken.has(run.correlationId));
  }
  let resumed = 0;
  let manualFires = 0;
  const batch: Dispatch[] = [];
  for (const read of held) {
    // Read as claimed (and taken over as claimed): nothing else is resumed.
    if (read.state !== 'claimed') continue;
    const run = { ...read, workerId: executor.workerId };
    const scheduler = schedulers.get(schedulerKeyString(run));
    if (scheduler === undefined) {
      if (options.takeOver) await endGone(rt, executor, run);
      continue;
    }
    if (run.trigger === 'manual') executor.start(run, scheduler);
    else batch.push({ run, scheduler });
    resumed++;
    if (read.workerId === null) manualFires++;
  }
  executor.startMany(batch);
  return { resumed, manualFires };
}

/** The effective schedulers of `runs`, by scheduler key: one load per project, of the runs' names only. */
async function effectiveSchedulers(
  rt: Runtime,
  runs: readonly Run[],
): Promise<Map<string, EffectiveScheduler>> {
  const projects = new Map<string, { tenant: string; project: string; names: Set<string> }>();
  for (const run of runs) {
    const key = projectKey(run);
    const entry = projects.get(key) ?? { tenant: run.tenant, project: run.project, names: new Set() };
    entry.names.add(run.name);
    projects.set(key, entry);
  }
  const byKey = new Map<string, EffectiveScheduler>();
  for (const { tenant, project, names } of projects.values()) {
    const { schedulers } = await loadProjectSchedulers(rt.repos, tenant, project, names);
    for (const [name, scheduler] of schedulers)
      byKey.set(schedulerKeyString({ tenant, project, name }), scheduler);
  }
  return byKey;
}

// Its document was deleted or broken meanwhile: end it visibly rather than start it.
async function endGone(rt: Runtime, executor: Executor, run: Run): Promise<void> {
  const ended: Run = {
    ...run,
    state: 'ended',
    outcome: 'failed',
    reason: 'scheduler-gone',
    endedAt: rt.clock.now(),
  };
  await executor.recorder.endFailed(ended, 'claimed', { reason: 'scheduler-gone' });
}
