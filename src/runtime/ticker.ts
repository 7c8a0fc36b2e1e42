import { randomUUID } from 'node:crypto';
import { decideDue } from '../decisions/misfire.js';
import { schedulerPath } from '../scheduler/document.js';
import { TENANT_PROJECT } from '../store/documents.js';
import type { Run } from '../store/runs.js';
import { runRow } from '../store/runs.js';
import type { ScheduleState } from '../store/schedules.js';
import { checkScheduler, type EffectiveScheduler } from './catalog.js';
import type { Runtime } from './context.js';
import type { Executor } from './executor.js';
import type { RunFaults } from './faults.js';
import { refreshProject } from './registrar.js';
import { runLogPath } from './run-log.js';

/** What one tick did (decisions §4). */
export interface TickResult {
  /** Schedulers found due. */
  readonly due: number;
  /** Occurrences this worker claimed (the others were claimed elsewhere first). */
  readonly claimed: number;
  /** Claims that absorbed later occurrences already due. */
  readonly coalesced: number;
  /** Claims started as processes. */
  readonly fired: number;
  /** Claims recorded as skipped (misfire threshold, catch-up window). */
  readonly skipped: number;
}

const BATCH = 500;

/**
 * Claims and dispatches due occurrences. Reads the clock once per tick; every decision is the
 * pure `decideDue` of that instant, and every claim is the compare-and-swap of decisions §4.
 */
export class Ticker {
  constructor(
    private readonly rt: Runtime,
    private readonly executor: Executor,
    /** The worker claiming: its heartbeat is the lease of what it claims (decisions §5). */
    private readonly workerId: string,
    private readonly faults: RunFaults = {},
  ) {}

  /** The effective scheduler behind a state row, as of the document version the state was made from. */
  async #effective(state: ScheduleState): Promise<EffectiveScheduler | undefined> {
    const project = state.source === 'tenant' ? TENANT_PROJECT : state.project;
    const document = await this.rt.repos.documents.get({
      tenant: state.tenant,
      project,
      path: schedulerPath(state.name),
    });
    if (document === undefined || document.version !== state.documentVersion) return undefined;
    try {
      const { definition, runAs } = await checkScheduler(this.rt.repos, state.project, document);
      return { definition, source: state.source, document, runAs };
    } catch {
      return undefined;
    }
  }

  /** One pass over the due schedulers at the clock's current instant. */
  async tick(): Promise<TickResult> {
    const { repos, clock, settings, log } = this.rt;
    const now = clock.now();
    const due = await repos.schedules.due(now, BATCH);
    let claimed = 0;
    let coalesced = 0;
    let fired = 0;
    let skipped = 0;
    for (const state of due) {
      const dueAt = state.nextRunAt as number;
      const scheduler = await this.#effective(state);
      if (scheduler === undefined) {
        // The document changed or broke since the state was written: a refresh re-registers it.
        log.warn(
          { tenant: state.tenant, project: state.project, scheduler: state.name },
          'due scheduler has no valid document; refreshing',
        );
        await refreshProject(this.rt, state.tenant, state.project);
        continue;
      }
      const decision = decideDue(
        { ...scheduler.definition, catchUpWindowMs: scheduler.definition.catchUpWindowMs },
        dueAt,
        now,
        settings.misfireThresholdMs,
      );
      const { advance } = decision;
      const correlationId = `run_${randomUUID()}`;
      const run: Run = {
        correlationId,
        tenant: state.tenant,
        project: state.project,
        name: state.name,
        scheduledFor: advance.scheduledFor,
        trigger: scheduler.definition.trigger.kind === 'at' ? 'at' : 'cron',
        coalesced: advance.coalesced,
        coalescedUntil: advance.coalesced ? advance.newestDue : null,
        claimedAt: now,
        state: decision.action === 'skip' ? 'skipped' : 'claimed',
        outcome: decision.action === 'skip' ? 'skipped_misfire' : 'pending',
        reason: decision.action === 'skip' ? decision.reason : null,
        runAs: scheduler.runAs,
        sessionId: null,
        processId: null,
        logPath: runLogPath(state.name, advance.scheduledFor, correlationId),
        startedAt: null,
        endedAt: null,
        workerId: this.workerId,
      };
      const won = await repos.schedules.claim(
        state,
        {
          expectedNextRunAt: dueAt,
          expectedLastScheduledAt: state.lastScheduledAt,
          nextRunAt: advance.nextRunAt,
          now,
        },
        runRow(run),
      );
      if (!won) continue;
      await this.faults.afterClaim?.(run);
      claimed++;
      if (advance.coalesced) coalesced++;
      if (decision.action === 'skip') {
        skipped++;
        await this.executor.recorder.recordSkipped(run, scheduler);
      } else {
        fired++;
        this.executor.start(run, scheduler);
      }
    }
    const result = { due: due.length, claimed, coalesced, fired, skipped };
    this.rt.metrics?.tick(result);
    if (result.due > 0) log.info({ tick: result }, 'tick');
    return result;
  }
}
