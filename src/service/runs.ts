import { type EffectiveScheduler, loadProjectSchedulers } from '../catalog/catalog.js';
import { InfrastructureError, UrsaError } from '../errors/index.js';
import { newCorrelationId } from '../runs/ids.js';
import type { ClaimedRun } from '../runs/run.js';
import { claimRun } from '../runs/transitions.js';
import type { Runtime } from '../runtime/context.js';
import { RunRecorder } from '../runtime/recorder.js';
import { runLogPath } from '../runtime/run-log.js';
import { type Actor, libraryActor } from '../store/audit.js';
import { formatInstant } from '../time/instant.js';
import { schedulerMissing } from './missing.js';

/** What a manual fire returns (spec §9 `scheduler_fire`). */
export interface FireResult {
  readonly correlationId: string;
  /** The run-log document of the run, readable at once (outcome `pending` until it ends). */
  readonly logPath: string;
}

/**
 * Fires a scheduler now, bypassing its cron schedule (spec §9 `scheduler_fire`). The run goes
 * through the same path as a tick — overlap policy, feed, run log — with `trigger: manual`: it
 * is written as a claimed run that no worker holds yet, and the store's workers are woken; the
 * first to look dispatches it (decisions §5). Its schedule (`nextRunAt`) does not move. The fire
 * is recorded in the audit trail as `by`'s (default: the library's `admin`), in the transaction
 * that writes the run (issue #19).
 *
 * @throws UrsaError `NOT_FOUND` when the project has no such valid scheduler; `SCHEDULER_PAUSED`
 *   when it is paused (issue #22), and nothing is recorded.
 */
export async function fireScheduler(
  rt: Runtime,
  tenant: string,
  project: string,
  name: string,
  by: Actor = libraryActor('admin'),
): Promise<FireResult> {
  const scheduler = await schedulerToRun(rt, tenant, project, name, 'fire');
  // Cron and at: fire times are whole seconds; a manual fire never is, so the two never share an
  // occurrence key (decisions §4).
  const clockNow = rt.clock.now();
  const now = clockNow % 1000 === 0 ? clockNow + 1 : clockNow;
  // The occurrence key is unique (decisions §4); two fires in one millisecond take the next one.
  for (let offset = 0; offset < 10; offset++) {
    const scheduledFor = now + offset;
    if (scheduledFor % 1000 === 0) continue;
    const run = requestedRun(scheduler, { tenant, project, name }, scheduledFor, 'manual', now);
    const { correlationId } = run;
    const fired = {
      tenant,
      project,
      at: clockNow,
      subjectType: 'scheduler',
      subject: name,
      action: 'fire',
      actor: by,
      detail: { correlationId },
    } as const;
    if (!(await rt.repos.runs.insert(run, fired))) continue;
    await new RunRecorder(rt).writeRunLog(run, undefined, scheduler);
    await rt.repos.store.notifyChange();
    rt.log.info({ scheduler: name, correlationId }, 'manual fire');
    return { correlationId, logPath: run.logPath };
  }
  throw new InfrastructureError('STORE_UNAVAILABLE', `scheduler ${name}: cannot record the manual fire`, {
    field: 'name',
    value: name,
  });
}

/**
 * A run someone asked for (a manual fire, a backfill's occurrence): claimed by no worker yet,
 * with a fresh correlation id, its run log's path and what the scheduler says of its user and
 * lock mode. `scheduledFor` and `now` are UTC ms.
 */
export function requestedRun(
  scheduler: EffectiveScheduler,
  key: { readonly tenant: string; readonly project: string; readonly name: string },
  scheduledFor: number,
  trigger: 'manual' | 'backfill',
  now: number,
): ClaimedRun {
  const correlationId = newCorrelationId();
  return claimRun({
    correlationId,
    ...key,
    scheduledFor,
    trigger,
    coalescedUntil: null,
    claimedAt: now,
    runAs: scheduler.runAs,
    logPath: runLogPath(key.name, scheduledFor, correlationId),
    workerId: null,
    lockMode: scheduler.definition.lockMode,
  });
}

/**
 * The effective scheduler `name` of (tenant, project) that a fire or a backfill (`what`) is about
 * to run, refused while it is paused.
 *
 * @throws UrsaError `NOT_FOUND` when the project has no such valid scheduler; `SCHEDULER_PAUSED`
 *   when it is paused (issue #22): its message carries the pause's note.
 */
export async function schedulerToRun(
  rt: Runtime,
  tenant: string,
  project: string,
  name: string,
  what: 'fire' | 'backfill',
): Promise<EffectiveScheduler> {
  const { schedulers } = await loadProjectSchedulers(rt.repos, tenant, project);
  const scheduler = schedulers.get(name);
  if (scheduler === undefined) throw await schedulerMissing(rt, tenant, project, name);
  // A paused scheduler runs on no one's request: the pause says why.
  const pause = scheduler.definition.enabled ? undefined : await rt.repos.pauses.get(scheduler.document);
  if (pause !== undefined) {
    const why = pause.note === '' ? '' : `: ${pause.note}`;
    throw new UrsaError(
      'SCHEDULER_PAUSED',
      `scheduler ${JSON.stringify(name)} was paused by ${pause.by} at ${formatInstant(pause.at)}${why}; resume it to ${what} it`,
      { field: 'name', value: name },
    );
  }
  return scheduler;
}

/**
 * Stops a process (spec §5 `processStop`) on whichever worker runs it; its END line says
 * `cancelled`. Stopping a process that already ended is not an error: `stopping` is then false.
 * A stop that stops it is recorded in the audit trail as `by`'s (default: the library's `admin`),
 * with the stop itself (issue #19).
 *
 * @throws UrsaError `NOT_FOUND` when there is no such process in the tenant.
 */
export async function stopProcess(
  rt: Runtime,
  tenant: string,
  processId: string,
  reason = 'stopped',
  by: Actor = libraryActor('admin'),
): Promise<{ stopping: boolean }> {
  const process = await rt.repos.processes.get(processId);
  if (process === undefined || process.tenant !== tenant) {
    throw new UrsaError('NOT_FOUND', `process ${JSON.stringify(processId)} does not exist`, {
      field: 'processId',
      value: processId,
    });
  }
  const now = rt.clock.now();
  const stopping = await rt.repos.processes.requestStop(processId, reason, now, {
    tenant,
    project: process.project,
    at: now,
    subjectType: 'process',
    subject: processId,
    action: 'stop',
    actor: by,
    detail: { reason },
  });
  if (stopping) await rt.repos.store.notifyChange();
  return { stopping };
}
