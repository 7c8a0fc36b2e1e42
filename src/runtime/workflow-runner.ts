import { randomBytes } from 'node:crypto';
import { findRecipe, findWorkflow } from '../catalog/catalog.js';
import { type Engine, type EngineRequest, type EngineResult, runEngine } from '../engines/engine.js';
import { isRefusal, UrsaError } from '../errors/index.js';
import { EngineCalls } from '../fencing/engine-calls.js';
import { LEASE_LOST } from '../fencing/lease.js';
import { LeaseGate } from '../fencing/lease-gate.js';
import { RunningGroups } from '../fencing/running-groups.js';
import { mergeParams } from '../recipes/resolve.js';
import { newProcessId } from '../runs/ids.js';
import { traceparentOf } from '../runs/trace.js';
import { ACTIVE_STATUSES } from '../store/processes.js';
import type { WorkflowRun, WorkflowRunStatus } from '../store/workflow-runs.js';
import type { WorkflowDefinition } from '../workflows/definition.js';
import { renderStepParams, type TemplateScope } from '../workflows/template.js';
import { refuseForbiddenString } from '../yaml/characters.js';
import type { Runtime } from './context.js';
import { stoppedBeforeEntry } from './final-stop.js';

/** How often a running step looks for a stop requested from another process, milliseconds. */
const STOP_POLL_MS = 1000;

/** What a run's steps may refer to, and how many bytes its templates rendered so far. */
interface RunScope extends TemplateScope {
  steps: TemplateScope['steps'];
  renderedBytes: number;
}

/** The attempt of the scheduler run a workflow run belongs to: what its steps' engines receive. */
export interface StepAttempt {
  readonly fencingToken: number;
  readonly attempt: number;
}

/**
 * A worker's fencing of the steps it runs (decisions §5): its engine calls in flight, where each
 * step's call and process groups are tracked, and its lease gate, which every step's engine entry
 * checks.
 */
export interface StepFencing {
  readonly calls: EngineCalls;
  readonly lease: LeaseGate;
}

/** A started workflow run: its record as started, and its end. */
export interface StartedWorkflow {
  readonly run: WorkflowRun;
  /** Resolves with the final status and reason once the run ended; never rejects. */
  readonly done: Promise<{
    readonly status: Exclude<WorkflowRunStatus, 'running'>;
    readonly reason: string | null;
  }>;
}

/**
 * The parameters of a start: the given ones over the workflow's defaults.
 *
 * @throws UrsaError `ARGUMENT_INVALID` (field `params.<name>`) for a parameter the workflow does
 *   not declare, a declared one without default that is not given, or a string (or key) holding
 *   a control character (the rule every document is held to, `src/yaml/characters.ts`).
 */
export function workflowParams(
  definition: WorkflowDefinition,
  given: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  refuseForbiddenString('ARGUMENT_INVALID', given, 'params');
  for (const name of Object.keys(given)) {
    if (!(name in definition.parameters))
      throw new UrsaError(
        'ARGUMENT_INVALID',
        `params.${name}: workflow ${definition.name} has no such parameter (it has: ${Object.keys(definition.parameters).join(', ') || 'none'})`,
        { field: `params.${name}`, value: name },
      );
  }
  const params: Record<string, unknown> = {};
  for (const [name, fallback] of Object.entries(definition.parameters)) {
    const value = given[name] ?? fallback;
    if (value === null || value === undefined)
      throw new UrsaError(
        'ARGUMENT_INVALID',
        `params.${name}: workflow ${definition.name} needs this parameter (it has no default)`,
        { field: `params.${name}` },
      );
    params[name] = value;
  }
  return params;
}

/**
 * Runs workflows (issue #10, spec §4.2): a start records the run with its document frozen and
 * its steps pending, then runs the steps in order in this process, each as a process of its
 * recipe in the session `_magrathea_<runId>`; a failed step fails the run and the steps after
 * it are skipped; a stop (here, or requested from another process) stops the running step and
 * cancels the run.
 */
export class WorkflowRunner {
  readonly #running = new Map<string, AbortController>();
  readonly #tasks = new Set<Promise<unknown>>();
  // The processes of the steps running here, from their record's creation until their end is
  // recorded: a reap of this worker leaves them alone.
  readonly #steps = new Set<string>();
  // The reason of the final stop of the worker (see shutDown); undefined until then.
  #shutDown: string | undefined;

  constructor(
    private readonly rt: Runtime,
    /** The worker that runs the steps (null for a command-line start). */
    private readonly workerId: string | null = null,
    /**
     * The worker's engine calls and lease gate (its executor's `calls` and `lease`); by default
     * calls of their own and a gate that always holds (a command-line start).
     */
    private readonly fencing: StepFencing = {
      calls: new EngineCalls(new RunningGroups()),
      lease: new LeaseGate(),
    },
  ) {}

  /**
   * Starts a run of workflow `name` in (tenant, project) as `runAs`, with `params` over the
   * workflow's defaults; `correlationId` links it to the scheduler run that started it, and
   * `attempt` is that run's attempt, whose fencing token every step's engine receives (decisions §5).
   *
   * @throws UrsaError `WORKFLOW_NOT_FOUND`, `WORKFLOW_INVALID`, `ARGUMENT_INVALID` (params); nothing
   *   is recorded then.
   */
  async start(
    tenant: string,
    project: string,
    name: string,
    params: Readonly<Record<string, unknown>>,
    runAs: string,
    correlationId: string | null = null,
    attempt?: StepAttempt,
  ): Promise<StartedWorkflow> {
    const { repos, clock } = this.rt;
    const { definition, document } = await findWorkflow(
      repos,
      tenant,
      project,
      name,
      this.rt.settings.templateLimits,
    );
    const resolved = workflowParams(definition, params);
    const id = randomBytes(4).toString('hex');
    const now = clock.now();
    const session = await repos.sessions.createSystem(tenant, project, `_magrathea_${id}`, runAs, now);
    await repos.workflowRuns.create(
      {
        id,
        tenant,
        project,
        workflow: name,
        params: resolved,
        document: document.body,
        runAs,
        sessionId: session.id,
        correlationId,
        createdAt: now,
        workerId: this.workerId,
      },
      definition.steps,
    );
    const run = (await repos.workflowRuns.get(tenant, id)) as WorkflowRun;
    const controller = new AbortController();
    if (this.#shutDown !== undefined) controller.abort(this.#shutDown);
    this.#running.set(id, controller);
    const done = this.#execute(run, definition, resolved, controller.signal, attempt).finally(() =>
      this.#running.delete(id),
    );
    this.#tasks.add(done);
    void done.finally(() => this.#tasks.delete(done));
    return { run, done };
  }

  /** Whether `processId` is the process of a step running here (its end not recorded yet). */
  runsStep(processId: string): boolean {
    return this.#steps.has(processId);
  }

  /** Stops a run running in this process (its current step); false when it does not run here. */
  stopLocal(id: string, reason = 'stopped'): boolean {
    const controller = this.#running.get(id);
    controller?.abort(reason);
    return controller !== undefined;
  }

  /**
   * A worker's final stop: stops every run of this process, as {@link stopAll}, and every run
   * started from now on is stopped before its first step (a start that was awaiting the store
   * meanwhile), so that none outlives the worker.
   */
  shutDown(reason: string): Promise<void> {
    this.#shutDown = reason;
    return this.stopAll(reason);
  }

  /** Stops every run of this process and waits for them to end (a worker's shutdown). */
  async stopAll(reason: string): Promise<void> {
    for (const controller of this.#running.values()) controller.abort(reason);
    await Promise.all([...this.#tasks]);
  }

  async #execute(
    run: WorkflowRun,
    definition: WorkflowDefinition,
    params: Record<string, unknown>,
    signal: AbortSignal,
    attempt: StepAttempt | undefined,
  ): Promise<{ status: Exclude<WorkflowRunStatus, 'running'>; reason: string | null }> {
    const { repos, clock, log } = this.rt;
    const scope: RunScope = { params, steps: {}, renderedBytes: 0 };
    const end = async (status: Exclude<WorkflowRunStatus, 'running'>, reason: string | null) => {
      await repos.workflowRuns.end(run.id, status, reason, clock.now());
      log.info({ workflowRunId: run.id, workflow: run.workflow, status, reason }, 'workflow run ended');
      return { status, reason };
    };
    try {
      for (const [position, step] of definition.steps.entries()) {
        if (signal.aborted || (await repos.workflowRuns.stopRequested(run.id)))
          return await end('cancelled', 'stopped');
        const outcome = await this.#step(run, position, step, scope, signal, attempt);
        if (outcome.status !== 'completed')
          return await end(
            outcome.status === 'cancelled' ? 'cancelled' : 'failed',
            `step ${step.name}: ${outcome.reason}`,
          );
        scope.steps = { ...scope.steps, [step.name]: { output: outcome.output } };
      }
      return await end('completed', null);
    } catch (error) {
      // A store error mid-run: the run ends failed with a fixed reason; the detail goes to the log.
      log.error({ err: error, workflowRunId: run.id }, 'workflow run failed');
      return end('failed', 'internal error').catch(() => ({
        status: 'failed' as const,
        reason: 'internal error',
      }));
    }
  }

  async #step(
    run: WorkflowRun,
    position: number,
    step: WorkflowDefinition['steps'][number],
    scope: RunScope,
    signal: AbortSignal,
    attempt: StepAttempt | undefined,
  ): Promise<{ status: 'completed' | 'failed' | 'cancelled'; reason: string; output: string }> {
    const { repos, clock, engines } = this.rt;
    const fail = async (reason: string) => {
      await repos.workflowRuns.updateStep(run.id, position, {
        status: 'failed',
        reason,
        ended_at: clock.now(),
      });
      return { status: 'failed' as const, reason, output: '' };
    };
    const recipe = await findRecipe(repos, run.tenant, run.project, step.recipe);
    if (recipe === undefined) return fail(`recipe ${JSON.stringify(step.recipe)} not found`);
    const engine = engines.get(recipe.engine);
    if (engine === undefined) return fail(`engine ${JSON.stringify(recipe.engine)} is not registered`);
    let params: Record<string, unknown>;
    try {
      const rendered = renderStepParams(
        step.params,
        scope,
        this.rt.settings.templateLimits,
        scope.renderedBytes,
      );
      scope.renderedBytes += rendered.bytes;
      params = mergeParams(recipe.params, rendered.params);
    } catch (error) {
      // Only Ursa's own words: the render translated every template error into TEMPLATE_FAILED.
      if (!isRefusal(error)) throw error;
      return fail(error.message);
    }
    const processId = newProcessId();
    const startedAt = clock.now();
    // Known here before its record exists: this worker's reap never takes it for an orphan.
    this.#steps.add(processId);
    try {
      await repos.processes.create({
        id: processId,
        tenant: run.tenant,
        project: run.project,
        sessionId: run.sessionId,
        recipe: recipe.name,
        engine: recipe.engine,
        status: 'running',
        ownerUser: run.runAs,
        triggerOrigin: {
          source: `magrathea:${run.workflow}`,
          scheduledFor: run.createdAt,
          correlationId: run.correlationId ?? run.id,
          trigger: 'workflow',
        },
        params,
        initialMessage: step.initialMessage ?? null,
        createdAt: startedAt,
      });
      await repos.workflowRuns.updateStep(run.id, position, {
        status: 'running',
        process_id: processId,
        started_at: startedAt,
      });
      const result = await this.#call(engine, {
        processId,
        recipe,
        params,
        initialMessage: step.initialMessage,
        context: {
          tenant: run.tenant,
          project: run.project,
          scheduler: run.workflow,
          correlationId: run.correlationId ?? run.id,
          scheduledFor: run.createdAt,
          runAs: run.runAs,
          ...attempt,
          // The steps of a scheduler's run join its run's trace (issue #26 item 3).
          ...(this.rt.tracer && run.correlationId ? { traceparent: traceparentOf(run.correlationId) } : {}),
        },
        runId: run.id,
        signal,
      });
      const endedAt = clock.now();
      const status =
        result.status === 'done' ? 'completed' : result.status === 'stopped' ? 'cancelled' : 'failed';
      const reason = result.reason ?? (status === 'completed' ? '' : status);
      await repos.processes.transition(processId, ACTIVE_STATUSES, {
        status: result.status,
        ended_at: endedAt,
        exit_code: result.exitCode ?? null,
        reason: result.reason ?? null,
        output_tail: result.output ?? null,
        error_tail: result.errorOutput ?? null,
      });
      const output = result.output ?? '';
      await repos.workflowRuns.updateStep(run.id, position, {
        status,
        output,
        reason: result.reason ?? null,
        ended_at: endedAt,
      });
      return { status, reason, output };
    } finally {
      this.#steps.delete(processId);
    }
  }

  /**
   * One step's engine call: stopped with its run (`signal`) or by a stop requested from another
   * process; never entered once the worker lost its lease (decisions §5 fencing), nor once its run
   * was stopped, both checked in the same turn as the entry, as a scheduler run's are.
   */
  async #call(
    engine: Engine,
    request: Omit<EngineRequest, 'signal' | 'spawned' | 'report'> & {
      readonly runId: string;
      readonly signal: AbortSignal;
    },
  ): Promise<EngineResult> {
    const { runId, signal, ...call } = request;
    const { calls, lease } = this.fencing;
    const controller = new AbortController();
    const abort = () => controller.abort(signal.reason ?? 'stopped');
    signal.addEventListener('abort', abort, { once: true });
    const poll = setInterval(() => {
      this.rt.repos.workflowRuns
        .stopRequested(runId)
        .then((requested) => requested && controller.abort('stopped'))
        .catch(() => {});
    }, STOP_POLL_MS);
    try {
      // A stop of the run that came while the step was prepared found no listener yet.
      if (signal.aborted) abort();
      if (!lease.held) controller.abort(LEASE_LOST);
      const stopped = stoppedBeforeEntry(controller.signal);
      if (stopped !== undefined) return stopped;
      // A workflow step runs to its end within its workflow run: it cannot be handed to a service.
      if (engine.handsOff === true)
        return {
          status: 'failed',
          reason: `engine ${JSON.stringify(engine.name)} hands its runs to a service, and a workflow step cannot be handed off; run it from a scheduler`,
        };
      // In flight from here until it returns; without a process group, only this thread can stop it.
      calls.enter(call.processId);
      return await runEngine(engine, {
        ...call,
        signal: controller.signal,
        spawned: (pgid) => calls.spawned(call.processId, pgid),
      });
    } finally {
      calls.returned(call.processId);
      clearInterval(poll);
      signal.removeEventListener('abort', abort);
    }
  }
}
