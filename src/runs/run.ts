import type { LockMode } from '../scheduler/definition.js';
import type { EndOutcome, RunOutcome, SkipOutcome } from './outcomes.js';

/**
 * How a run came about: its scheduler's cron or `at:` instant, a manual fire, or a backfill of a
 * past occurrence (issue #22; queued in its lane's backfill queue until its turn).
 */
export type RunTrigger = 'cron' | 'at' | 'manual' | 'backfill';

/**
 * What every run has, whatever its state: one claimed occurrence of a scheduler (decisions §4).
 * Instants are UTC epoch ms.
 */
interface RunBase {
  /** `run_<uuid>`; the feed's traceId. */
  readonly correlationId: string;
  readonly tenant: string;
  readonly project: string;
  readonly name: string;
  /** The occurrence's instant (a manual fire's: its request instant, never a whole second). */
  readonly scheduledFor: number;
  readonly trigger: RunTrigger;
  /** Whether later occurrences were already due at the claim and this run absorbed them (decisions §4). */
  readonly coalesced: boolean;
  /** The newest absorbed occurrence, when coalesced. */
  readonly coalescedUntil: number | null;
  readonly claimedAt: number;
  readonly runAs: string;
  /** The path of its run log (spec §9a). */
  readonly logPath: string;
  /** The worker that claimed it (and runs it); null for a manual fire no worker took yet. */
  readonly workerId: string | null;
  /**
   * The scheduler's lock mode when the run was claimed (spec §10b): a run of a `hidden` scheduler
   * stays hidden from agents whatever later happens to the scheduler.
   */
  readonly lockMode: LockMode;
  /** How many times the run was started: 0 until its first start, then 1, 2, … (decisions §5). */
  readonly attempt: number;
  /**
   * The fencing token of the run's latest attempt (see `src/store/fencing.ts`): larger than the
   * token of every earlier attempt of its scheduler; null before the first start (and for runs
   * started before tokens existed). The run's writes after its start are conditioned on it.
   */
  readonly fencingToken: number | null;
  readonly outcome: RunOutcome;
  readonly reason: string | null;
  readonly sessionId: string | null;
  readonly processId: string | null;
  readonly startedAt: number | null;
  readonly endedAt: number | null;
  /** When it began to wait in its lane behind {@link waitingBehind} (spec §5), UTC ms; null if it never waited. */
  readonly queuedAt: number | null;
  /** The correlation id of the lane's active run it waited behind; null if it never waited. */
  readonly waitingBehind: string | null;
  /** The correlation id of the waiting run it was folded into (`skipped_overlap_queued`); else null. */
  readonly foldedInto: string | null;
}

/** A run claimed, not started yet (claimed ahead of its instant, or a manual fire). */
export interface ClaimedRun extends RunBase {
  readonly state: 'claimed';
  readonly outcome: typeof RunOutcome.PENDING;
  readonly endedAt: null;
}

/** A run waiting for its scheduler's lane (spec §5 `queue`, `cancelPrevious`). */
export interface QueuedRun extends RunBase {
  readonly state: 'queued';
  readonly outcome: typeof RunOutcome.PENDING;
  readonly endedAt: null;
}

/**
 * A started run: its process (a recipe target; `processId` set) or workflow run (a workflow
 * target; `processId` null) was started at `startedAt`, in its scheduler's system session.
 */
export interface StartedRun extends RunBase {
  readonly state: 'started';
  readonly outcome: typeof RunOutcome.PENDING;
  readonly startedAt: number;
  readonly endedAt: null;
}

/** A run that ended: after its start, or (failed) when it could not be started at all. */
export interface EndedRun extends RunBase {
  readonly state: 'ended';
  readonly outcome: EndOutcome;
  readonly endedAt: number;
}

/**
 * A run never started (spec §5, decisions §4): `endedAt` is when it was skipped (null for a
 * misfire, skipped at its claim).
 */
export interface SkippedRun extends RunBase {
  readonly state: 'skipped';
  readonly outcome: SkipOutcome;
}

/**
 * A run (one claimed occurrence) as the rest of Ursa sees it, keyed by `state`: a check of the
 * state gives the fields it makes certain (a started run's `startedAt`, an ended run's `endedAt`
 * and outcome) without a cast.
 */
export type Run = ClaimedRun | QueuedRun | StartedRun | EndedRun | SkippedRun;

/** A run not started yet: what an admission moves (spec §5). */
export type PendingRun = ClaimedRun | QueuedRun;

/** A started run of a recipe target: its process, in its scheduler's system session, is set. */
export type StartedProcess = StartedRun & { readonly processId: string; readonly sessionId: string };

/**
 * A run started by this version of Ursa: its fencing token was assigned by the transaction that
 * started it (decisions §5). `P` is its process id: a string for a recipe target, null for a
 * workflow target.
 */
export type FencedRun<P extends string | null = string | null> = StartedRun & {
  readonly fencingToken: number;
  readonly processId: P;
};

/**
 * `R` as it ends: what `R`'s state made certain stays certain (a started run's `startedAt`, its
 * process id), and the end's fields are set (see `endRun`).
 */
export type EndedFrom<R extends Run> = Omit<R, 'state' | 'outcome' | 'reason' | 'endedAt' | 'workerId'> &
  EndedRun;

/**
 * The requests folded into a waiting run (outcome `skipped_overlap_queued`, spec §5): how many,
 * and the oldest few ({@link FOLDED_SHOWN}) with their trigger, occurrence and when they were
 * folded (UTC ms).
 */
export interface FoldedRuns {
  readonly count: number;
  readonly first: readonly Pick<Run, 'correlationId' | 'trigger' | 'scheduledFor' | 'endedAt'>[];
}

/** How many folded requests a run log and a run's view name one by one. */
export const FOLDED_SHOWN = 5;
