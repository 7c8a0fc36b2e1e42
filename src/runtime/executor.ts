import { randomUUID } from 'node:crypto';
import { MAX_RETENTION_DAYS } from '../config/schema.js';
import { mergeParams } from '../recipes/resolve.js';
import { schedulerPath } from '../scheduler/document.js';
import type { FeedLine } from '../store/feed.js';
import type { ProcessRecord } from '../store/processes.js';
import type { Run } from '../store/runs.js';
import type { EffectiveScheduler } from './catalog.js';
import { findRecipe } from './catalog.js';
import type { Runtime } from './context.js';
import { renderRunLog } from './run-log.js';

const DAY_MS = 86_400_000;

/** The system session of a scheduler (spec §6). */
export function systemSessionName(scheduler: string): string {
  return `_ursascheduler_${scheduler}`;
}

const OUTCOME_OF = { done: 'completed', failed: 'failed', stopped: 'cancelled' } as const;

/**
 * Runs claimed occurrences: creates the process in the scheduler's system session, runs it on
 * its engine, and records every transition as feed lines (spec §7) and the run log (spec §9a).
 */
export class Executor {
  readonly #running = new Map<string, { controller: AbortController; done: Promise<void> }>();

  constructor(private readonly rt: Runtime) {}

  /** How many processes this executor is running now. */
  get active(): number {
    return this.#running.size;
  }

  /** Writes (or, with retention < 0, skips) the run log of `run` (spec §9a TTL). */
  async writeRunLog(run: Run, process?: ProcessRecord): Promise<void> {
    const days = this.rt.settings.runLogRetentionDays;
    if (days < 0) return;
    const now = this.rt.clock.now();
    const expiresAt = days === 0 ? null : now + Math.min(days, MAX_RETENTION_DAYS) * DAY_MS;
    await this.rt.repos.documents.put(
      { tenant: run.tenant, project: run.project, path: run.logPath },
      renderRunLog(run, process),
      'ursa',
      now,
      expiresAt,
    );
  }

  /**
   * Appends a feed line of `run` (spec §7: traceId = correlationId, refType SCHEDULER, refId name,
   * the run log as link). Every line says which occurrence it is about and whether it was coalesced.
   */
  async appendLine(
    run: Run,
    kind: FeedLine['kind'],
    at: number,
    outcome: string,
    details: Record<string, unknown>,
  ): Promise<void> {
    await this.rt.repos.feed.append({
      tenant: run.tenant,
      project: run.project,
      at,
      kind,
      refType: 'SCHEDULER',
      refId: run.name,
      traceId: run.correlationId,
      outcome,
      logPath: run.logPath,
      payload: {
        trigger: run.trigger,
        scheduledFor: run.scheduledFor,
        coalesced: run.coalesced,
        coalescedUntil: run.coalescedUntil,
        ...details,
      },
    });
  }

  /** Records a claimed occurrence that is not run (misfire, catch-up window): one feed line and its log. */
  async recordSkipped(run: Run): Promise<void> {
    await this.appendLine(run, 'SKIPPED', run.claimedAt, run.outcome, { reason: run.reason });
    await this.writeRunLog(run);
    this.rt.log.info(
      { scheduler: run.name, correlationId: run.correlationId, outcome: run.outcome, reason: run.reason },
      'run skipped',
    );
  }

  /**
   * Starts a claimed run in the background; returns at once. The run moves claimed → started
   * exactly once (a run another worker started is left alone).
   */
  start(run: Run, scheduler: EffectiveScheduler): void {
    const controller = new AbortController();
    const done = this.#execute(run, scheduler, controller.signal)
      .catch((error: unknown) => {
        this.rt.log.error({ err: error, correlationId: run.correlationId }, 'run failed unexpectedly');
      })
      .finally(() => this.#running.delete(run.correlationId));
    this.#running.set(run.correlationId, { controller, done });
  }

  /** Resolves when every process started so far has ended and been recorded. */
  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running.values()].map((r) => r.done));
  }

  /** Waits up to `graceMs` for running processes, then stops the rest and waits for them to end. */
  async drain(graceMs: number): Promise<void> {
    const all = () => Promise.all([...this.#running.values()].map((r) => r.done));
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([all(), grace]);
    clearTimeout(timer);
    for (const { controller } of this.#running.values()) controller.abort('shutdown');
    await all();
  }

  async #execute(claimed: Run, scheduler: EffectiveScheduler, signal: AbortSignal): Promise<void> {
    const { repos, clock, log } = this.rt;
    const { definition } = scheduler;
    const target = definition.target;
    if (target.kind !== 'recipe') return;
    const recipe = await findRecipe(repos, claimed.tenant, claimed.project, target.recipe);
    const session = await repos.sessions.getOrCreate(
      claimed.tenant,
      claimed.project,
      systemSessionName(claimed.name),
      claimed.runAs,
      clock.now(),
    );
    const processId = `proc_${randomUUID()}`;
    const startedAt = clock.now();
    if (
      !(await repos.runs.transition(
        claimed.correlationId,
        'claimed',
        { state: 'started', session_id: session.id, process_id: processId, started_at: startedAt },
        claimed.workerId,
      ))
    ) {
      return;
    }
    let run: Run = { ...claimed, state: 'started', sessionId: session.id, processId, startedAt };
    const params = mergeParams(recipe?.params ?? {}, definition.params);
    await repos.processes.create({
      id: processId,
      tenant: run.tenant,
      project: run.project,
      sessionId: session.id,
      recipe: target.recipe,
      engine: recipe?.engine ?? 'unknown',
      status: 'ready',
      ownerUser: run.runAs,
      triggerOrigin: {
        source: `ursascheduler:${run.name}`,
        scheduledFor: run.scheduledFor,
        correlationId: run.correlationId,
        trigger: run.trigger,
      },
      params,
      initialMessage: definition.initialMessage ?? null,
      createdAt: startedAt,
    });
    await this.appendLine(run, 'START', startedAt, 'pending', {
      processId,
      sessionId: session.id,
      runAs: run.runAs,
    });
    await this.writeRunLog(run, await repos.processes.get(processId));
    log.info(
      {
        scheduler: run.name,
        correlationId: run.correlationId,
        processId,
        scheduledFor: new Date(run.scheduledFor).toISOString(),
        coalesced: run.coalesced,
      },
      'run started',
    );
    if (definition.trigger.kind === 'at' && scheduler.source === 'project') {
      // A spawned one-shot leaves the scheduler prefix (spec §10a); its history stays in the feed.
      await repos.documents.trash(
        { tenant: run.tenant, project: run.project, path: schedulerPath(run.name) },
        clock.now(),
      );
    }

    const engine = recipe === undefined ? undefined : this.rt.engines.get(recipe.engine);
    await repos.processes.transition(processId, ['ready'], { status: 'running', started_at: clock.now() });
    const result =
      recipe === undefined
        ? { status: 'failed' as const, reason: `recipe ${JSON.stringify(target.recipe)} not found` }
        : engine === undefined
          ? { status: 'failed' as const, reason: `engine ${JSON.stringify(recipe.engine)} is not registered` }
          : await engine.run({
              processId,
              recipe,
              params,
              initialMessage: definition.initialMessage,
              context: {
                tenant: run.tenant,
                project: run.project,
                scheduler: run.name,
                correlationId: run.correlationId,
                scheduledFor: run.scheduledFor,
                runAs: run.runAs,
              },
              signal,
            });
    const endedAt = clock.now();
    await repos.processes.transition(processId, ['running'], {
      status: result.status,
      ended_at: endedAt,
      exit_code: result.exitCode ?? null,
      reason: result.reason ?? null,
      output_tail: result.output ?? null,
      error_tail: result.errorOutput ?? null,
    });
    const outcome = OUTCOME_OF[result.status];
    const ended = await repos.runs.transition(
      run.correlationId,
      'started',
      { state: 'ended', outcome, reason: result.reason ?? null, ended_at: endedAt },
      run.workerId,
    );
    // Another worker already ended it (this worker's lease lapsed): its END line stands.
    if (!ended) return;
    run = { ...run, state: 'ended', outcome, reason: result.reason ?? null, endedAt };
    await this.appendLine(run, 'END', endedAt, outcome, {
      processId,
      durationMs: endedAt - startedAt,
      exitCode: result.exitCode ?? null,
      reason: result.reason ?? null,
    });
    await this.writeRunLog(run, await repos.processes.get(processId));
    log.info(
      {
        scheduler: run.name,
        correlationId: run.correlationId,
        processId,
        outcome,
        durationMs: endedAt - startedAt,
        reason: result.reason,
      },
      'run ended',
    );
  }
}
