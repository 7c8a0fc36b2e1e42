import type { Insertable } from 'kysely';
import type { EffectiveScheduler } from '../catalog/catalog.js';
import { MAX_RETENTION_DAYS } from '../config/schema.js';
import { nextFireTime } from '../cron/index.js';
import type { FoldedRuns } from '../runs/run.js';
import { runSpan } from '../runs/trace.js';
import { URSA_ACTOR } from '../store/audit.js';
import { type FeedLine, feedRow } from '../store/feed.js';
import type { ProcessRecord } from '../store/processes.js';
import type { Run } from '../store/runs.js';
import type { FeedTable } from '../store/schema.js';
import { runLogRetentionDays } from '../store/setting-cascades.js';
import type { WorkflowRun } from '../store/workflow-runs.js';
import { MS_PER_DAY } from '../time/calendar.js';
import { formatInstant } from '../time/instant.js';
import type { Runtime } from './context.js';
import { pauseAfterFailures } from './failure-pause.js';
import {
  type Absorbed,
  type EarlierAttempt,
  type RunLogNote,
  type RunLogProcess,
  renderRunLog,
} from './run-log.js';

const ABSORBED_COUNT_CAP = 1000;

/**
 * What a coalesced run absorbed, for its log: counted by stepping the cron expression from the
 * served occurrence, at most {@link ABSORBED_COUNT_CAP} steps — the claim itself never walks the
 * backlog (decisions §4); only this description of it does, and with a bound.
 */
export function absorbedBy(run: Run, scheduler: EffectiveScheduler | undefined): Absorbed | undefined {
  const trigger = scheduler?.definition.trigger;
  if (!run.coalesced || run.coalescedUntil === null || trigger?.kind !== 'cron') return undefined;
  const zone = scheduler?.definition.zone;
  if (zone === undefined) return undefined;
  const first = nextFireTime(trigger.cron, zone, run.scheduledFor);
  if (first === null) return undefined;
  let count = 0;
  for (
    let t: number | null = first;
    t !== null && t <= run.coalescedUntil;
    t = nextFireTime(trigger.cron, zone, t)
  ) {
    if (++count >= ABSORBED_COUNT_CAP) return { count, capped: true, first, last: run.coalescedUntil };
  }
  return { count, capped: false, first, last: run.coalescedUntil };
}

/**
 * A feed line of `run` (spec §7: traceId = correlationId, refType SCHEDULER, refId name, the run
 * log as link). Every line says which occurrence it is about and whether it was coalesced.
 */
export function feedLineOf(
  run: Run,
  kind: FeedLine['kind'],
  at: number,
  outcome: string,
  details: Record<string, unknown>,
): Omit<FeedLine, 'id'> {
  return {
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
      // The lock mode the run was claimed under: agents never see a line of a hidden run (spec §10b).
      ...(run.lockMode === 'full' ? {} : { lockMode: run.lockMode }),
      ...details,
    },
  };
}

/** When a run log written at `now` (UTC ms) expires: null keeps it (0 days, spec §9a). */
function expiryOf(days: number, now: number): number | null {
  return days === 0 ? null : now + Math.min(days, MAX_RETENTION_DAYS) * MS_PER_DAY;
}

/**
 * Writes what happens to runs where people and agents read it: feed lines (spec §7) and run-log
 * documents (spec §9a). Used by every path that moves a run.
 */
export class RunRecorder {
  // The failed attempts of runs retried here, by correlation id (see attemptFailed).
  readonly #attempts = new Map<string, EarlierAttempt[]>();

  constructor(private readonly rt: Runtime) {}

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
    await this.rt.repos.feed.append(feedLineOf(run, kind, at, outcome, details));
  }

  /**
   * Writes (or, with retention < 0, skips) the run log of `run` (spec §9a TTL). The retention is
   * resolved afresh on every write (project → `_tenant` → operator config), so a changed setting
   * applies from the next lifecycle event. The log of a run not yet ended (claimed, queued,
   * started: `pending`) is written only while the run is still in that state and at the attempt of
   * `run.fencingToken`: a write that comes late — from a worker that stalled while another ended
   * the run or started it again — never replaces the final log or a later attempt's.
   * A `note` adds a line to its timeline (this version only: the next transition re-renders it).
   */
  async writeRunLog(
    run: Run,
    process?: ProcessRecord,
    scheduler?: EffectiveScheduler,
    workflowRun?: WorkflowRun,
    note?: RunLogNote,
  ): Promise<void> {
    const days = await this.retentionDays(run.tenant, run.project);
    const now = this.rt.clock.now();
    if (days < 0) return;
    // Only a run that waited behind another can have requests folded into it (spec §5).
    const folded =
      run.waitingBehind === null
        ? undefined
        : (await this.rt.repos.runs.folded([run.correlationId])).get(run.correlationId);
    await this.rt.repos.documents.put(
      { tenant: run.tenant, project: run.project, path: run.logPath },
      renderRunLog(
        run,
        process,
        absorbedBy(run, scheduler),
        workflowRun,
        note,
        this.#attempts.get(run.correlationId),
        folded,
      ),
      URSA_ACTOR,
      now,
      expiryOf(days, now),
      {
        archive: false,
        ...(run.state === 'ended' || run.state === 'skipped'
          ? {}
          : {
              whileRun: {
                correlationId: run.correlationId,
                state: run.state,
                fencingToken: run.fencingToken,
              },
            }),
      },
    );
  }

  /**
   * Keeps a failed attempt of a run that is retried here (issue #22), for the run's later logs
   * (each attempt a section of its timeline), until {@link forgetAttempts}.
   */
  attemptFailed(correlationId: string, attempt: EarlierAttempt): void {
    this.#attempts.set(correlationId, [...(this.#attempts.get(correlationId) ?? []), attempt]);
  }

  /**
   * Records the span of `run`, final (ended or skipped) by this process's hand, when tracing is
   * on (issue #26 item 3): every path that ends or skips a run calls it once it has won that move,
   * so a run ended by another worker (a reap) still gets its one span, from the run's own claim.
   * `scheduler`, when at hand, gives the count of occurrences a coalesced run absorbed.
   */
  traced(run: Run, scheduler: EffectiveScheduler | undefined): void {
    const { tracer } = this.rt;
    if (tracer === undefined) return;
    const absorbed = run.coalesced ? absorbedBy(run, scheduler)?.count : 0;
    tracer.record(runSpan(run, absorbed));
  }

  /** The run ended: its attempts are in its final log. */
  forgetAttempts(correlationId: string): void {
    this.#attempts.delete(correlationId);
  }

  /** Run-log retention of a project in days (project → `_tenant` → operator config, spec §9a). */
  retentionDays(tenant: string, project: string): Promise<number> {
    return runLogRetentionDays(this.rt.repos, tenant, project, this.rt.settings.runLogRetentionDays);
  }

  /**
   * The run-log document of a run as a row to write in a batch (the first log of a batch of
   * starts, the final log of a batch of ends, with its process); undefined when run logs are off
   * (`days` < 0).
   *
   * @param days the project's retention ({@link retentionDays}).
   * @param now UTC ms: the document's creation instant.
   */
  runLogRow(
    run: Run,
    scheduler: EffectiveScheduler | undefined,
    days: number,
    now: number,
    process?: RunLogProcess,
    workflowRun?: WorkflowRun,
    folded?: FoldedRuns,
    /** An agent run's reports for its timeline (issue #25). */
    agentEvents?: readonly RunLogNote[],
  ) {
    if (days < 0) return undefined;
    return {
      tenant: run.tenant,
      project: run.project,
      path: run.logPath,
      body: renderRunLog(
        run,
        process,
        absorbedBy(run, scheduler),
        workflowRun,
        undefined,
        this.#attempts.get(run.correlationId),
        folded,
        agentEvents,
      ),
      created_by: 'ursa',
      version: 1,
      created_at: now,
      updated_at: now,
      expires_at: expiryOf(days, now),
      trashed_from: null,
    };
  }

  /**
   * Records a run that is not started (misfire, catch-up window, overlap, a scheduler deleted or
   * disabled before its instant): one feed line and its log. `details` go into the line's payload
   * besides the reason (e.g. which instants a misfire skipped).
   */
  async recordSkipped(
    run: Run,
    scheduler?: EffectiveScheduler,
    details: Record<string, unknown> = {},
  ): Promise<void> {
    this.rt.metrics?.runs.inc({ outcome: run.outcome, trigger: run.trigger });
    this.traced(run, scheduler);
    await this.appendLine(run, 'SKIPPED', run.endedAt ?? run.claimedAt, run.outcome, {
      reason: run.reason,
      ...(run.foldedInto === null ? {} : { foldedInto: run.foldedInto }),
      ...details,
    });
    await this.writeRunLog(run, undefined, scheduler);
    this.rt.log.info(
      { scheduler: run.name, correlationId: run.correlationId, outcome: run.outcome, reason: run.reason },
      'run skipped',
    );
  }

  /**
   * Puts a failed run in its `runAs` user's inbox (decisions §2), whichever path ended it, and
   * pauses its scheduler when that makes its `pauseOnFailure` (issue #22; a store error there is
   * logged: the run's end stands, and the next failed run looks again).
   */
  async notifyFailed(run: Run, at: number): Promise<void> {
    await this.rt.repos.inbox.add({
      tenant: run.tenant,
      user: run.runAs,
      kind: 'run-failed',
      // A title is one line (the CLI lists one per item): a reason's line breaks become spaces.
      title: `${run.name} failed${run.reason ? `: ${run.reason.replace(/\s*[\r\n]+\s*/g, ' ')}` : ''}`,
      body: `The run of ${run.name} scheduled for ${formatInstant(run.scheduledFor)} ended failed. Its log: ${run.logPath}`,
      project: run.project,
      scheduler: run.name,
      correlationId: run.correlationId,
      logPath: run.logPath,
      createdAt: at,
    });
    try {
      await pauseAfterFailures(this.rt, run, at);
    } catch (error) {
      this.rt.log.error(
        { scheduler: run.name, correlationId: run.correlationId, err: error },
        'pause on failure failed',
      );
    }
  }

  /**
   * Ends a run failed on a recovery path (worker lost, spawn failed, scheduler gone, a workflow
   * that cannot start): the run's end, its END line and its final run log in one transaction
   * (`Runs.endMany`), so that a store error or a crash between them cannot leave the run ended
   * without its final log (spec §9a): the run stays as it was, and the next try ends it. Then its
   * inbox item.
   *
   * @param run the run as ended (`state` ended, `outcome` failed, `reason`, `endedAt`), with the
   *   `workerId` that must still hold it.
   * @param from the state it must still be in.
   * @param opening a START line to append before the END line (see `missingStartLine`).
   * @param scheduler the run's scheduler when at hand (its span counts what a coalesced run absorbed).
   * @returns whether this call ended it (false: another path moved it first).
   */
  async endFailed(
    run: Run,
    from: Run['state'],
    details: Record<string, unknown>,
    opening?: Insertable<FeedTable>,
    scheduler?: EffectiveScheduler,
  ): Promise<boolean> {
    const at = run.endedAt ?? this.rt.clock.now();
    const days = await this.retentionDays(run.tenant, run.project);
    const ended = await this.rt.repos.runs.endMany([
      {
        run,
        from,
        process: undefined,
        line: feedRow(feedLineOf(run, 'END', at, 'failed', details)),
        opening,
        log: this.runLogRow(run, undefined, days, this.rt.clock.now()),
      },
    ]);
    if (!ended.has(run.correlationId)) return false;
    this.forgetAttempts(run.correlationId);
    this.traced(run, scheduler);
    await this.notifyFailed(run, at);
    this.rt.log.warn(
      { scheduler: run.name, correlationId: run.correlationId, reason: run.reason },
      'run ended failed',
    );
    return true;
  }
}
