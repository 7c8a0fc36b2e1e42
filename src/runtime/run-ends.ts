import type { EffectiveScheduler } from '../catalog/catalog.js';
import type { EngineResult } from '../engines/engine.js';
import type { EndedFrom, FencedRun } from '../runs/run.js';
import { feedRow } from '../store/feed.js';
import type { Run } from '../store/runs.js';
import { schedulerKeyString } from '../store/schedules.js';
import type { WorkflowRun } from '../store/workflow-runs.js';
import { Batcher } from './batcher.js';
import type { Runtime } from './context.js';
import { type DispatchContext, persist } from './dispatch-context.js';
import { feedLineOf, type RunRecorder } from './recorder.js';
import type { RunLogNote } from './run-log.js';
import { projectKey } from './run-records.js';
import type { StartQueue } from './start-queue.js';

/**
 * A started run as it ends: a recipe target's with what its engine said, a workflow target's with
 * its workflow run (undefined when it could not be read).
 */
export type Ended =
  | {
      readonly run: EndedFrom<FencedRun<string>>;
      /** Undefined only for an agent run whose scheduler no longer loads (its end still stands). */
      readonly scheduler: EffectiveScheduler | undefined;
      readonly result: EngineResult;
      /** An agent run's reports, for its run log's timeline (issue #25). */
      readonly agentEvents?: readonly RunLogNote[];
    }
  | {
      readonly run: EndedFrom<FencedRun<null>>;
      readonly scheduler: EffectiveScheduler;
      readonly workflowRun: WorkflowRun | undefined;
    };

/**
 * The ends of the runs started here (spec §9a): written together per turn of the event loop (the
 * run, its process, its END line and its final run log, see `Runs.endMany`), and each pending from
 * its engine's return until written, so that a start of the same scheduler waits for it.
 */
export class RunEnds {
  readonly #batch = new Batcher<Ended, boolean>((ends) => this.#write(ends));
  // Runs whose engine has returned and whose end is not written yet, by scheduler key: their lane
  // is free in fact but not yet in the store, so a start of the same scheduler waits for the write.
  readonly #ending = new Map<string, Promise<void>>();

  constructor(
    private readonly rt: Runtime,
    private readonly recorder: RunRecorder,
    /** The worker's batch starts: a write of ends waits while starts wait for their turn. */
    private readonly starts?: StartQueue,
  ) {}

  /** Writes the end with the others of this turn; whether it ended here (false: another worker ended it). */
  add(end: Ended): Promise<boolean> {
    return this.#batch.add(end);
  }

  /** Runs `write` (the end of `run`'s record) as the pending end of its scheduler's lane. */
  pending<T>(run: Run, write: () => Promise<T>): Promise<T> {
    const key = schedulerKeyString(run);
    const done = write();
    const settled = done.then(
      () => {},
      () => {},
    );
    this.#ending.set(key, settled);
    void settled.then(() => {
      if (this.#ending.get(key) === settled) this.#ending.delete(key);
    });
    return done;
  }

  /** Resolves once the pending ends of these runs' schedulers (engines returned here) are written. */
  async written(runs: readonly Run[]): Promise<void> {
    const pending = runs.flatMap((run) => this.#ending.get(schedulerKeyString(run)) ?? []);
    if (pending.length > 0) await Promise.all(pending);
  }

  // The ends of one turn's runs together (see `Runs.endMany`); per run, whether it ended here.
  async #write(ends: readonly Ended[]): Promise<boolean[]> {
    // Starts first: at a top of the hour the ends of the first runs would hold up the starts of
    // the last (a start that waits for its scheduler's end is not among those waiting its turn).
    await this.starts?.clear();
    const retention = new Map<string, number>();
    for (const { run } of ends) {
      const key = projectKey(run);
      if (!retention.has(key)) retention.set(key, await this.recorder.retentionDays(run.tenant, run.project));
    }
    const now = this.rt.clock.now();
    // The requests folded into the runs that waited (issue #23): none asked of the others.
    const folds = await this.rt.repos.runs.folded(
      ends.flatMap(({ run }) => (run.waitingBehind === null ? [] : [run.correlationId])),
    );
    const ended = await this.rt.repos.runs.endMany(
      ends.map((end) => {
        const { run, scheduler } = end;
        const durationMs = run.endedAt - run.startedAt;
        const days = retention.get(projectKey(run)) ?? -1;
        if ('workflowRun' in end) {
          const { workflowRun } = end;
          // A workflow run that could not be read leaves the END line as a process-less run's.
          const details =
            workflowRun === undefined
              ? { processId: null, durationMs, exitCode: null, reason: run.reason }
              : { workflowRunId: workflowRun.id, durationMs, reason: run.reason };
          return {
            run,
            process: undefined,
            line: feedRow(feedLineOf(run, 'END', run.endedAt, run.outcome, details)),
            log: this.recorder.runLogRow(
              run,
              scheduler,
              days,
              now,
              undefined,
              workflowRun,
              folds.get(run.correlationId),
            ),
          };
        }
        const { result } = end;
        const process = {
          id: end.run.processId,
          // An `accepted` run (handed to its agent service) is not ended by its engine's return.
          status: result.status === 'accepted' ? ('running' as const) : result.status,
          endedAt: run.endedAt,
          exitCode: result.exitCode ?? null,
          reason: run.reason,
          outputTail: result.output ?? null,
          errorTail: result.errorOutput ?? null,
        };
        const details = { processId: process.id, durationMs, exitCode: process.exitCode, reason: run.reason };
        return {
          run,
          process,
          line: feedRow(feedLineOf(run, 'END', run.endedAt, run.outcome, details)),
          log: this.recorder.runLogRow(
            run,
            scheduler,
            days,
            now,
            process,
            undefined,
            folds.get(run.correlationId),
            end.agentEvents,
          ),
        };
      }),
    );
    for (const { run } of ends) this.recorder.forgetAttempts(run.correlationId);
    return ends.map(({ run }) => ended.has(run.correlationId));
  }
}

/** How a started run ends (see {@link endStarted}). */
export interface StartedEnd {
  /** The run as ended. */
  readonly run: Ended['run'];
  readonly scheduler: EffectiveScheduler;
  /** Its end to write (read afresh on each try: a workflow target's workflow run). */
  readonly record: () => Ended | Promise<Ended>;
  /** Awaited before the end is written (a fault point; the run's pending run log). */
  readonly before?: () => Promise<unknown>;
  /** What the `run ended` log line says besides the run, its outcome and its reason. */
  readonly logged: Readonly<Record<string, unknown>>;
  /**
   * Whether a run may wait behind it for its lane: only `queue` and `cancelPrevious` leave one
   * (one left by a policy changed since is found by the worker's periodic look for waiting runs).
   */
  readonly promote: boolean;
}

/**
 * The end of a started run once its engine or workflow run returned — written once for both
 * targets: the end, as the pending end of its lane, retried while the store fails; then its
 * metrics, its span (issue #26 item 3), its log line, the inbox item of a failed run (spec §12), and its lane to the run
 * waiting behind it (spec §5). Nothing of it happens when another worker ended the run already
 * (this worker's lease lapsed): its END line stands.
 */
export async function endStarted(ctx: DispatchContext, end: StartedEnd): Promise<void> {
  const { run, scheduler } = end;
  const written = ctx.ends.pending(run, async () => {
    await end.before?.();
    return persist(ctx, 'the end of a run', async () => ctx.ends.add(await end.record()));
  });
  if (!(await written)) return;
  const { outcome, reason } = run;
  ctx.rt.metrics?.runs.inc({ outcome, trigger: run.trigger });
  ctx.recorder.traced(run, scheduler);
  ctx.rt.log.info(
    { scheduler: run.name, correlationId: run.correlationId, ...end.logged, outcome, reason },
    'run ended',
  );
  if (outcome === 'failed') await ctx.recorder.notifyFailed(run, run.endedAt);
  if (end.promote) await ctx.promoteWaiting(run, scheduler);
}
