import type { Selectable } from 'kysely';
import { type AuditEntry, writeAudited } from './audit.js';
import { heldByDead, type Liveness } from './liveness.js';
import type { Store } from './open.js';
import type { WorkflowRunsTable, WorkflowStepsTable } from './schema-workflows.js';

/** A workflow run's status; `running` until it ends. */
export type WorkflowRunStatus = 'running' | 'completed' | 'failed' | 'cancelled';
/** A step's status. */
export type WorkflowStepStatus = 'pending' | 'running' | 'completed' | 'failed' | 'cancelled' | 'skipped';

/** A workflow run (issue #10). Instants are UTC epoch ms. */
export interface WorkflowRun {
  /** 8 hex digits (spec §4.2). */
  readonly id: string;
  readonly tenant: string;
  readonly project: string;
  readonly workflow: string;
  readonly status: WorkflowRunStatus;
  readonly params: Readonly<Record<string, unknown>>;
  /** The workflow document as it was at start. */
  readonly document: string;
  readonly runAs: string;
  /** `_magrathea_<id>`: the session its steps' processes run in. */
  readonly sessionId: string;
  /** The scheduler run that started it, if a scheduler did. */
  readonly correlationId: string | null;
  readonly reason: string | null;
  readonly createdAt: number;
  readonly endedAt: number | null;
  readonly steps: readonly WorkflowStepRecord[];
}

/** One step of a run as recorded. */
export interface WorkflowStepRecord {
  readonly position: number;
  readonly name: string;
  readonly recipe: string;
  readonly status: WorkflowStepStatus;
  readonly processId: string | null;
  /** What the step's engine returned as output (the shell engine: stdout, capped). */
  readonly output: string | null;
  readonly reason: string | null;
  readonly startedAt: number | null;
  readonly endedAt: number | null;
}

/** A running step of a workflow run whose worker is lost (see `WorkflowRuns.lostSteps`). */
export interface LostStep {
  /** The step's Ursa process (`proc_…`): its shell processes carry it as `URSA_PROCESS_ID`. */
  readonly processId: string;
  readonly workflowRunId: string;
  readonly tenant: string;
  readonly project: string;
  readonly workflow: string;
}

const num = (v: number | string | null) => (v === null ? null : Number(v));

function toStep(row: Selectable<WorkflowStepsTable>): WorkflowStepRecord {
  return {
    position: Number(row.position),
    name: row.name,
    recipe: row.recipe,
    status: row.status as WorkflowStepStatus,
    processId: row.process_id,
    output: row.output,
    reason: row.reason,
    startedAt: num(row.started_at),
    endedAt: num(row.ended_at),
  };
}

function toRun(row: Selectable<WorkflowRunsTable>, steps: WorkflowStepRecord[]): WorkflowRun {
  return {
    id: row.id,
    tenant: row.tenant,
    project: row.project,
    workflow: row.workflow,
    status: row.status as WorkflowRunStatus,
    params: JSON.parse(row.params) as Record<string, unknown>,
    document: row.document,
    runAs: row.run_as,
    sessionId: row.session_id,
    correlationId: row.correlation_id,
    reason: row.reason,
    createdAt: Number(row.created_at),
    endedAt: num(row.ended_at),
    steps,
  };
}

/** Workflow runs and their steps (issue #10). */
export class WorkflowRuns {
  constructor(private readonly store: Store) {}

  /** Inserts a run (status `running`) with its steps (`pending`), in one transaction. */
  async create(
    run: Omit<WorkflowRun, 'status' | 'reason' | 'endedAt' | 'steps'> & { readonly workerId: string | null },
    steps: readonly { readonly name: string; readonly recipe: string }[],
  ): Promise<void> {
    await this.store.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('workflow_runs')
        .values({
          id: run.id,
          tenant: run.tenant,
          project: run.project,
          workflow: run.workflow,
          status: 'running',
          params: JSON.stringify(run.params),
          document: run.document,
          run_as: run.runAs,
          session_id: run.sessionId,
          correlation_id: run.correlationId,
          worker_id: run.workerId,
          reason: null,
          created_at: run.createdAt,
          ended_at: null,
          stop_requested_at: null,
        })
        .execute();
      await trx
        .insertInto('workflow_steps')
        .values(
          steps.map((step, position) => ({
            run_id: run.id,
            position,
            name: step.name,
            recipe: step.recipe,
            status: 'pending',
            process_id: null,
            output: null,
            reason: null,
            started_at: null,
            ended_at: null,
          })),
        )
        .execute();
    });
  }

  /** A run of the tenant with its steps in order, or undefined. */
  async get(tenant: string, id: string): Promise<WorkflowRun | undefined> {
    const row = await this.store.db
      .selectFrom('workflow_runs')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('id', '=', id)
      .executeTakeFirst();
    if (row === undefined) return undefined;
    const steps = await this.store.db
      .selectFrom('workflow_steps')
      .selectAll()
      .where('run_id', '=', id)
      .orderBy('position')
      .execute();
    return toRun(row, steps.map(toStep));
  }

  /** The newest runs of a project (without steps), at most `limit`. */
  async list(tenant: string, project: string, limit: number): Promise<WorkflowRun[]> {
    const rows = await this.store.db
      .selectFrom('workflow_runs')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('project', '=', project)
      .orderBy('created_at', 'desc')
      .limit(limit)
      .execute();
    return rows.map((row) => toRun(row, []));
  }

  /** Moves a step; `values` are its new status and whichever of its fields changed. */
  async updateStep(
    runId: string,
    position: number,
    values: Partial<Omit<Selectable<WorkflowStepsTable>, 'run_id' | 'position' | 'name' | 'recipe'>>,
  ): Promise<void> {
    await this.store.db
      .updateTable('workflow_steps')
      .set(values)
      .where('run_id', '=', runId)
      .where('position', '=', position)
      .execute();
  }

  /**
   * Ends a running run: its status, reason and end instant; every step still `pending` becomes
   * `skipped`. False when it was not running (already ended).
   */
  async end(id: string, status: Exclude<WorkflowRunStatus, 'running'>, reason: string | null, at: number) {
    return this.store.db.transaction().execute(async (trx) => {
      const moved = await trx
        .updateTable('workflow_runs')
        .set({ status, reason, ended_at: at })
        .where('id', '=', id)
        .where('status', '=', 'running')
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) !== 1) return false;
      await trx
        .updateTable('workflow_steps')
        .set({ status: 'skipped' })
        .where('run_id', '=', id)
        .where('status', '=', 'pending')
        .execute();
      return true;
    });
  }

  /**
   * Asks the worker running it to stop the run (from any process); false when it is not running.
   * With `audit`, the stop is recorded with it in one transaction (issue #19), when it stops the run.
   */
  async requestStop(tenant: string, id: string, at: number, audit?: AuditEntry): Promise<boolean> {
    return writeAudited(
      this.store.db,
      async (db) => {
        const result = await db
          .updateTable('workflow_runs')
          .set({ stop_requested_at: at })
          .where('tenant', '=', tenant)
          .where('id', '=', id)
          .where('status', '=', 'running')
          .executeTakeFirst();
        return Number(result.numUpdatedRows) === 1;
      },
      audit === undefined ? undefined : (stopping) => (stopping ? audit : undefined),
    );
  }

  /**
   * Running runs held by a worker that is not live by `liveness` as this statement runs (its
   * lease lapsed, decisions §5): at most `limit` ids.
   */
  async orphaned(liveness: Liveness, limit: number): Promise<string[]> {
    const rows = await this.store.db
      .selectFrom('workflow_runs')
      .select('id')
      .where('status', '=', 'running')
      .where('worker_id', 'is not', null)
      .where(heldByDead('worker_id', liveness))
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  /**
   * The running steps of the runs {@link orphaned} would return, at most `limit`: what a dead
   * worker's workflow runs may have left running. Each step's process id is recorded before its
   * engine starts, and its shell processes carry it as `URSA_PROCESS_ID` (decisions §5 fencing).
   */
  async lostSteps(liveness: Liveness, limit: number): Promise<LostStep[]> {
    const rows = await this.store.db
      .selectFrom('workflow_steps as s')
      .innerJoin('workflow_runs as w', 'w.id', 's.run_id')
      .select(['s.process_id', 'w.id', 'w.tenant', 'w.project', 'w.workflow'])
      .where('s.status', '=', 'running')
      .where('s.process_id', 'is not', null)
      .where('w.status', '=', 'running')
      .where('w.worker_id', 'is not', null)
      .where(heldByDead('w.worker_id', liveness))
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      processId: r.process_id as string,
      workflowRunId: r.id,
      tenant: r.tenant,
      project: r.project,
      workflow: r.workflow,
    }));
  }

  /** Asks for a stop of the running workflow run a scheduler run started (overlap `cancelPrevious`). */
  async requestStopFor(correlationId: string, at: number): Promise<void> {
    await this.store.db
      .updateTable('workflow_runs')
      .set({ stop_requested_at: at })
      .where('correlation_id', '=', correlationId)
      .where('status', '=', 'running')
      .execute();
  }

  /** Whether a stop was requested for the run. */
  async stopRequested(id: string): Promise<boolean> {
    const row = await this.store.db
      .selectFrom('workflow_runs')
      .select('stop_requested_at')
      .where('id', '=', id)
      .executeTakeFirst();
    return row?.stop_requested_at !== null && row?.stop_requested_at !== undefined;
  }
}
