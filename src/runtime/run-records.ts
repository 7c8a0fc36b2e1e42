import { type EffectiveScheduler, recipeOf } from '../catalog/catalog.js';
import { mergeParams } from '../recipes/resolve.js';
import type { FencedRun, StartedProcess } from '../runs/run.js';
import { feedRow } from '../store/feed.js';
import type { Opening, WorkflowStartRecord } from '../store/lane-records.js';
import { type NewProcess, processRow } from '../store/processes.js';
import type { Run } from '../store/runs.js';
import { absorbedBy, feedLineOf } from './recorder.js';

/*
 * What a started run writes besides its run row (spec §6, §7): its process and the details of its
 * START line. Pure; shared by the single and the batched start.
 */

/** The process of a run that starts (`run.processId`, `run.sessionId` and `run.startedAt` set). */
export function processOf(
  run: StartedProcess,
  scheduler: EffectiveScheduler,
  params: Readonly<Record<string, unknown>>,
  status: 'ready' | 'running',
): NewProcess {
  return {
    id: run.processId,
    tenant: run.tenant,
    project: run.project,
    sessionId: run.sessionId,
    recipe: recipeOf(scheduler).name,
    engine: recipeOf(scheduler).engine,
    status,
    ownerUser: run.runAs,
    triggerOrigin: {
      source: `ursascheduler:${run.name}`,
      scheduledFor: run.scheduledFor,
      correlationId: run.correlationId,
      trigger: run.trigger,
    },
    params,
    initialMessage: scheduler.definition.initialMessage ?? null,
    createdAt: run.startedAt,
  };
}

/** The params a recipe run gets: the recipe's defaults, overridden by the scheduler's (spec §4.1). */
export function runParams(scheduler: EffectiveScheduler): Record<string, unknown> {
  return mergeParams(recipeOf(scheduler).params, scheduler.definition.params);
}

/**
 * What a recipe run's start writes with it, in the transaction that starts it (issue #20): its
 * process (`ready`, or `running` since `run.startedAt` for a batch start, which enters the engine
 * at that instant) and its START line at `run.startedAt`.
 */
export function openingOf(
  run: StartedProcess,
  scheduler: EffectiveScheduler,
  params: Readonly<Record<string, unknown>>,
  status: 'ready' | 'running',
): Opening {
  const { startedAt } = run;
  return {
    process: processRow(processOf(run, scheduler, params, status), status === 'running' ? startedAt : null),
    line: feedRow(feedLineOf(run, 'START', startedAt, 'pending', startDetails(run, scheduler))),
  };
}

/**
 * The details of a START line (spec §7): the process, for a run that waited whom it waited behind,
 * and for a coalesced run what it absorbed.
 */
export function startDetails(started: Run, scheduler: EffectiveScheduler): Record<string, unknown> {
  const absorbed = absorbedBy(started, scheduler);
  return {
    processId: started.processId,
    sessionId: started.sessionId,
    runAs: started.runAs,
    // A run that waited in its lane says behind which run and since when (issue #23).
    ...(started.queuedAt === null
      ? {}
      : { queuedAt: started.queuedAt, waitingBehind: started.waitingBehind }),
    ...(absorbed === undefined
      ? {}
      : {
          reason: 'catch-up',
          absorbed: absorbed.count,
          absorbedCapped: absorbed.capped,
          absorbedFirst: absorbed.first,
          absorbedLast: absorbed.last,
        }),
  };
}

/**
 * The start record of an attempt of a run of a workflow target (spec §4.2): no process of its
 * own, a START line naming the workflow run it started.
 */
export function workflowStartRecord(
  started: FencedRun<null>,
  workflowRunId: string,
  workflow: string,
): WorkflowStartRecord {
  const { startedAt } = started;
  return {
    correlationId: started.correlationId,
    fencingToken: started.fencingToken,
    startedAt,
    line: feedRow(
      feedLineOf(started, 'START', startedAt, 'pending', { workflowRunId, workflow, runAs: started.runAs }),
    ),
  };
}

/** One key per (tenant, project). */
export function projectKey(run: Pick<Run, 'tenant' | 'project'>): string {
  return `${run.tenant}\u0000${run.project}`;
}
