import { performance } from 'node:perf_hooks';
import type { EffectiveScheduler } from '../catalog/catalog.js';
import { SchedulerCache } from '../catalog/scheduler-cache.js';
import { decideDue } from '../decisions/misfire.js';
import { claimWakeAt, ownedSlots, stealBefore } from '../decisions/partition.js';
import { UrsaError } from '../errors/index.js';
import { newCorrelationId } from '../runs/ids.js';
import type { ClaimedRun, SkippedRun } from '../runs/run.js';
import { tickSpan } from '../runs/trace.js';
import { claimRun, skipMisfire } from '../runs/transitions.js';
import type { Claimer, UpcomingCursor } from '../store/claimable.js';
import { leaseLiveness } from '../store/liveness.js';
import type { Run } from '../store/runs.js';
import { runRow } from '../store/runs.js';
import type { Claim, ScheduleState } from '../store/schedules.js';
import { ClaimWindow } from './claim-window.js';
import type { Runtime } from './context.js';
import type { Dispatch } from './dispatch-context.js';
import type { Executor } from './executor.js';
import type { RunFaults } from './faults.js';
import { refreshProject } from './registrar.js';
import { runLogPath } from './run-log.js';

/** What one tick did (decisions §4). */
export interface TickResult {
  /** Schedulers found due. */
  readonly due: number;
  /** Claims this worker won, one per due scheduler (the others were claimed elsewhere first). */
  readonly claimed: number;
  /** Claims that absorbed later occurrences already due. */
  readonly coalesced: number;
  /** Claims started as processes. */
  readonly fired: number;
  /**
   * Runs recorded as skipped (misfire threshold, catch-up window); with `misfire: skip` also the
   * older occurrences of a backlog whose newest one is started (then one claim counts in both).
   */
  readonly skipped: number;
}

const BATCH = 1000;

/**
 * How far ahead a worker prepares the schedulers of coming occurrences in its idle time, ms: a
 * minute, enough to read and check the 100,000 schedulers of a top of the hour (issue #24).
 */
export const PREPARE_HORIZON_MS = 60_000;

/**
 * The idle time below which a loop's pass prepares nothing, ms; a pass leaves half of it to spare.
 * Long enough that schedulers firing every second or so are never prepared between their
 * occurrences: on SQLite a page of the prepare holds the event loop, and their next start with it.
 */
export const PREPARE_SLACK_MS = 2000;

/** How often a ticker reads which workers are live, ms: a join or a loss moves slots within it. */
const LIVE_REFRESH_MS = 1000;

/**
 * Schedulers a worker's start checks ahead (the soonest due): ten full claim batches, about a
 * second of parsing; the rest are checked when they first fall due (issue #11).
 */
export const SEED_LIMIT = 10_000;

/** A due occurrence of this tick: the run its claim inserts, and whether it is recorded skipped. */
interface Candidate {
  /** Claimed, or skipped at its claim for a misfire (decisions §4). */
  readonly run: ClaimedRun | SkippedRun;
  readonly scheduler: EffectiveScheduler;
  readonly skip: boolean;
  readonly claim: Claim;
  /** The older occurrences of the backlog, recorded skipped while `run` (the newest) starts. */
  readonly skippedOlder?: Run;
}

/**
 * Claims and dispatches due occurrences. Reads the clock once per tick for its decisions (and
 * again for its span's end, when traced); every decision is the pure `decideDue` of that instant,
 * and the claims of one tick are the compare-and-swaps of decisions §4, made together in one
 * transaction (issue #4).
 */
export class Ticker {
  readonly #schedulers: SchedulerCache;
  #live: { at: number; ids: readonly string[] } = { at: Number.NEGATIVE_INFINITY, ids: [] };
  // Where the last prepare stopped: the (instant, key) of the last state it read.
  #prepared: UpcomingCursor | undefined;
  // The fire-ahead window, widened before what is coming (issue #24).
  readonly #window: ClaimWindow;

  constructor(
    private readonly rt: Runtime,
    private readonly executor: Executor,
    /** The worker claiming: its heartbeat is the lease of what it claims (decisions §5). */
    private readonly workerId: string,
    /** How long after its last heartbeat another worker counts as lost, ms. */
    private readonly deadAfterMs: () => number,
    private readonly faults: RunFaults = {},
  ) {
    this.#schedulers = new SchedulerCache(rt.repos);
    this.#window = new ClaimWindow(rt.repos.schedules);
  }

  /**
   * Seeds the checked-scheduler cache with the `limit` schedulers due soonest (by `nextRunAt`), so
   * that the first claims after a start read and parse no document (issue #4) while a start with a
   * million schedulers parses only these (issue #11). Returns how many are now cached.
   */
  async seed(limit = SEED_LIMIT): Promise<number> {
    const all = [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER] as const;
    const soonest = await this.rt.repos.schedules.upcoming(...all, undefined, limit, undefined);
    for (let i = 0; i < soonest.length; i += BATCH)
      await this.#schedulers.resolve(soonest.slice(i, i + BATCH));
    return this.#schedulers.size;
  }

  /**
   * Prepares for the coming occurrences (issue #24): reads and checks, into the scheduler cache,
   * the schedulers of this worker's slots due within the next `horizonMs` ms that it does not
   * hold yet, page by page (one at least), until the window is done or about `budgetMs` ms of
   * work were spent (measured on the monotonic clock: a bound on work, not a scheduling
   * decision). So that at the top of the hour the claims parse no document: a worker's idle time
   * before the instant does it. It stops after the page in progress once `interrupted()` is true
   * (a change to look at, a stop).
   * A pass goes on where the last one stopped; a scheduler changed behind that point is checked
   * at its claim, as without this. Returns how many schedulers it checked.
   */
  async prepare(
    horizonMs: number,
    budgetMs: number,
    interrupted: () => boolean = () => false,
  ): Promise<number> {
    const began = performance.now();
    const now = this.rt.clock.now();
    await this.#refreshLive(now);
    const slots = ownedSlots(this.workerId, this.#live.ids);
    let after = this.#prepared !== undefined && this.#prepared.nextRunAt >= now ? this.#prepared : undefined;
    let checked = 0;
    do {
      const page = await this.rt.repos.schedules.upcoming(now, now + horizonMs, after, BATCH, slots);
      const last = page.at(-1);
      if (last === undefined) break;
      after = {
        tenant: last.tenant,
        project: last.project,
        name: last.name,
        nextRunAt: last.nextRunAt as number,
      };
      const missing = page.filter((state) => !this.#schedulers.holds(state));
      if (missing.length > 0) await this.#schedulers.resolve(missing);
      checked += missing.length;
    } while (performance.now() - began < budgetMs && !interrupted());
    this.#prepared = after;
    return checked;
  }

  /**
   * One pass over the schedulers due at the clock's current instant (at most {@link BATCH}), and,
   * with `aheadMs` > 0, over those due within the next `aheadMs` milliseconds: claimed now and
   * started at their occurrence, so that the claim's cost is paid before it (decisions §4; Quartz
   * calls this the fire-ahead window). An occurrence claimed ahead is decided as of its own instant.
   * With tracing on, a tick that found something due, or failed, is a span (issue #26 item 3).
   */
  async tick(aheadMs = 0): Promise<TickResult> {
    const { tracer, clock } = this.rt;
    if (tracer === undefined) return this.#tick(aheadMs, clock.now());
    const now = clock.now();
    try {
      const result = await this.#tick(aheadMs, now);
      if (result.due > 0) tracer.record(tickSpan(this.workerId, now, clock.now(), result));
      return result;
    } catch (error) {
      // Only Ursa's own words: a driver's message may name hosts, files or values.
      const code = error instanceof UrsaError ? `: ${error.code}` : '';
      tracer.record(tickSpan(this.workerId, now, clock.now(), undefined, `the tick failed${code}`));
      throw error;
    }
  }

  async #tick(aheadMs: number, now: number): Promise<TickResult> {
    const { repos, log } = this.rt;
    const claims: Candidate[] = [];
    const stale = new Map<string, { tenant: string; project: string }>();
    await this.#refreshLive(now);
    const began = performance.now();
    const { due, won } = await repos.schedules.claimDue(
      now + aheadMs,
      BATCH,
      now,
      this.#claimer(now),
      async (states) => {
        const effective = await this.#schedulers.resolve(states);
        for (const [i, state] of states.entries()) {
          const scheduler = effective[i];
          if (scheduler === undefined) {
            stale.set(`${state.tenant}\u0000${state.project}`, state);
            continue;
          }
          claims.push(this.#candidate(state, scheduler, now));
        }
        return claims.map((c) => c.claim);
      },
    );
    this.#window.observe(performance.now() - began, won.size);
    const fire: Dispatch[] = [];
    const skipped: { run: Run; scheduler: EffectiveScheduler }[] = [];
    const backlogs: { run: Run; scheduler: EffectiveScheduler; newest: number }[] = [];
    let claimed = 0;
    let coalesced = 0;
    for (const c of claims) {
      const { skippedOlder } = c;
      const older = skippedOlder !== undefined && won.has(skippedOlder.correlationId);
      const own = won.has(c.run.correlationId);
      if (!own && !older) continue;
      claimed++;
      if (c.run.coalesced || skippedOlder !== undefined) coalesced++;
      if (older) backlogs.push({ run: skippedOlder, scheduler: c.scheduler, newest: c.run.scheduledFor });
      if (!own) continue;
      await this.faults.afterClaim?.(c.run);
      if (c.run.state === 'skipped') skipped.push(c);
      else fire.push({ run: c.run, scheduler: c.scheduler });
    }
    // A skipped backlog's line precedes the START of its newest occurrence, so that a scheduler's
    // history lists its runs in the order of their instants; only a misfire waits for it, and a
    // store error writing it holds back no claim.
    try {
      for (const { run, scheduler, newest } of backlogs)
        await this.executor.recorder.recordSkipped(run, scheduler, skippedDetails(run, newest));
    } finally {
      this.executor.startMany(fire);
    }
    for (const { run, scheduler } of skipped)
      await this.executor.recorder.recordSkipped(run, scheduler, skippedDetails(run));
    // After the claims are dispatched: a refresh the store fails fails this pass, and must not
    // hold back what was claimed (issue #20). The stale state stays due, so the next pass retries.
    for (const state of stale.values()) {
      // The document changed or broke since the state was written: a refresh re-registers it.
      log.warn(
        { tenant: state.tenant, project: state.project },
        'due scheduler has no valid document; refreshing',
      );
      await refreshProject(this.rt, state.tenant, state.project);
    }
    const result = {
      due: due.length,
      claimed,
      coalesced,
      fired: fire.length,
      skipped: skipped.length + backlogs.length,
    };
    this.rt.metrics?.tick(result);
    if (result.due > 0) log.info({ tick: result }, 'tick');
    return result;
  }

  /**
   * The fire-ahead window of the next pass, ms: `baseMs` (the configured one), widened to claim
   * before their instant what is coming (sized by {@link Ticker.wakeAt}; decisions/claim-window.ts).
   */
  aheadMs(baseMs: number): number {
    return this.#window.ms(baseMs);
  }

  /**
   * The instant (UTC ms) this worker next has an occurrence to claim, null when none is
   * scheduled, after a tick with `last` as its result, its configured fire-ahead window being
   * `baseAheadMs`: by the earliest next occurrence of its slots and of any slot
   * (decisions/partition.ts, issue #24), less the window that what is due within the longest
   * window needs (see {@link Ticker.aheadMs}).
   */
  async wakeAt(last: TickResult, baseAheadMs: number): Promise<number | null> {
    const now = this.rt.clock.now();
    const slots = ownedSlots(this.workerId, this.#live.ids);
    const { schedules } = this.rt.repos;
    const any = await schedules.earliestNextRunAt();
    const mine = slots === undefined || any === null ? any : await schedules.earliestNextRunAt(slots);
    const aheadMs =
      mine === null ? baseAheadMs : await this.#window.size(now, slots, baseAheadMs, last.due, BATCH);
    return claimWakeAt({
      mine,
      any,
      heldByOthers: last.due === 0 && mine !== null && mine - aheadMs <= now,
      now,
      aheadMs,
      deadAfterMs: this.deadAfterMs(),
    });
  }

  /** Who claims at `now`: this worker, and the liveness of the others (whose active runs it leaves to them). */
  #claimer(now: number): Claimer {
    const deadAfterMs = this.deadAfterMs();
    const slots = ownedSlots(this.workerId, this.#live.ids);
    return {
      workerId: this.workerId,
      others: leaseLiveness(now, deadAfterMs),
      ...(slots === undefined ? {} : { slots, stealBefore: stealBefore(now, deadAfterMs) }),
    };
  }

  // The live workers, read again at most once per LIVE_REFRESH_MS: who shares the slots (issue #24).
  async #refreshLive(now: number): Promise<void> {
    if (now >= this.#live.at && now - this.#live.at < LIVE_REFRESH_MS) return;
    this.#live = { at: now, ids: await this.rt.repos.workers.live(now, this.deadAfterMs()) };
  }

  /** The claim of one due state, decided as of its own instant when claimed ahead (pure but for the run ids). */
  #candidate(state: ScheduleState, scheduler: EffectiveScheduler, now: number): Candidate {
    const { settings } = this.rt;
    const dueAt = state.nextRunAt as number;
    const decision = decideDue(
      scheduler.definition,
      dueAt,
      Math.max(now, dueAt),
      settings.misfireThresholdMs,
    );
    const { advance } = decision;
    const skip = decision.action === 'skip';
    const runOf = (
      scheduledFor: number,
      coalescedUntil: number | null,
      reason: string | null,
    ): ClaimedRun | SkippedRun => {
      const correlationId = newCorrelationId();
      const run = claimRun({
        correlationId,
        tenant: state.tenant,
        project: state.project,
        name: state.name,
        scheduledFor,
        trigger: scheduler.definition.trigger.kind === 'at' ? 'at' : 'cron',
        coalescedUntil,
        claimedAt: now,
        runAs: scheduler.runAs,
        logPath: runLogPath(state.name, scheduledFor, correlationId),
        workerId: this.workerId,
        lockMode: scheduler.definition.lockMode,
      });
      return reason === null ? run : skipMisfire(run, reason);
    };
    const swap = {
      expectedNextRunAt: dueAt,
      expectedLastScheduledAt: state.lastScheduledAt,
      nextRunAt: advance.nextRunAt,
      now,
    };
    if (decision.action === 'skip-older') {
      // The newest missed occurrence runs on its own; the older ones are one skipped run before it.
      const { from, until } = decision.skipped;
      const older = runOf(from, until > from ? until : null, decision.reason);
      const run = runOf(advance.newestDue, null, null);
      return {
        run,
        scheduler,
        skip: false,
        skippedOlder: older,
        claim: { key: state, swap, run: runRow(run), skipped: runRow(older) },
      };
    }
    const run = runOf(
      advance.scheduledFor,
      advance.coalesced ? advance.newestDue : null,
      skip ? decision.reason : null,
    );
    return { run, scheduler, skip, claim: { key: state, swap, run: runRow(run) } };
  }
}

/**
 * What a misfire's SKIPPED line says besides its reason (decisions §4: which instants, and why):
 * the first and last occurrence it skipped and, when the newest missed occurrence runs instead,
 * that one. Instants are UTC epoch ms.
 */
export function skippedDetails(run: Run, newest?: number): Record<string, unknown> {
  if (run.outcome !== 'skipped_misfire') return {};
  return {
    skippedFirst: run.scheduledFor,
    skippedLast: run.coalescedUntil ?? run.scheduledFor,
    ...(newest === undefined ? {} : { runsInstead: newest }),
  };
}
