import type { CronExpression } from '../cron/index.js';
import type { TimeZone } from '../time/zone.js';

/** Overlap policy (spec §5): what a new run does while the previous one is still active. */
export const OverlapPolicy = { skip: 'skip', queue: 'queue', cancelPrevious: 'cancelPrevious' } as const;
export type OverlapPolicy = (typeof OverlapPolicy)[keyof typeof OverlapPolicy];

/** Lock mode (spec §10b): how much an agent may see and change of a scheduler. */
export const LockMode = { full: 'full', protected: 'protected', hidden: 'hidden' } as const;
export type LockMode = (typeof LockMode)[keyof typeof LockMode];

/**
 * The lock mode a run was recorded under, read back from a stored value (a run's row, a run log's
 * front matter, a feed line's payload): none is `full` (written before runs kept their mode), and
 * a value that is no lock mode reads as `hidden`, so an odd record is hidden from agents, never shown.
 */
export function recordedLockMode(value: unknown): LockMode {
  if (value === undefined) return 'full';
  return value === 'full' || value === 'protected' ? value : 'hidden';
}

/**
 * Misfire policy (decisions §4): `once` (default) runs a schedule that fell behind once, however
 * many occurrences it missed; `skip` does not run a due instant older than the operator's
 * misfire threshold (spec §3 behaviour).
 */
export const MisfirePolicy = { once: 'once', skip: 'skip' } as const;
export type MisfirePolicy = (typeof MisfirePolicy)[keyof typeof MisfirePolicy];

/**
 * A scheduler's bounds (issue #22): the first and last instants it may fire at and how many runs it
 * may start. Instants are UTC epoch milliseconds; each is undefined when the document sets none.
 */
/**
 * A scheduler's `retry` (issue #22): a run's attempts in all, the first included (1-10), and the
 * wait before its first retry, doubled before each next (`retryDelay`).
 */
export interface RetryPolicy {
  readonly attempts: number;
  /** The first wait as written (ISO-8601 duration). */
  readonly backoff: string;
  /** The first wait, milliseconds. */
  readonly backoffMs: number;
}

export interface ScheduleBounds {
  /** `startAt`: no occurrence before it fires. */
  readonly startAt: number | undefined;
  /** `endAt`: no occurrence after it fires. */
  readonly endAt: number | undefined;
  /** `maxRuns`: runs started (whatever their outcome; skipped ones do not count), at least 1. */
  readonly maxRuns: number | undefined;
}

/** When a scheduler fires: a cron expression, or once at an instant (spec §2, §10a). */
export type SchedulerTrigger =
  | {
      readonly kind: 'cron';
      /** The expression as written in the document. */
      readonly expression: string;
      readonly cron: CronExpression;
    }
  | {
      readonly kind: 'at';
      /** The `at:` value as written in the document. */
      readonly at: string;
      /** The one fire time, UTC epoch milliseconds. */
      readonly instant: number;
    };

/** What a scheduler starts (spec §4): a process from a recipe, or a workflow run. */
export type SchedulerTarget =
  | { readonly kind: 'recipe'; readonly recipe: string }
  | { readonly kind: 'workflow'; readonly workflow: string };

/**
 * A validated scheduler document (`_vance/scheduler/<name>.yaml`, spec §2, decisions §4).
 * Only the document parser creates one; every default is already applied.
 */
export interface SchedulerDefinition {
  /** The document's file name without `.yaml`. */
  readonly name: string;
  readonly description: string;
  readonly trigger: SchedulerTrigger;
  /** `timezone:` as written, or undefined when the document has none. */
  readonly timezone: string | undefined;
  /** The zone the trigger is read in: `timezone:`, else UTC (spec §2). */
  readonly zone: TimeZone;
  /** Default true; false pauses the scheduler without deleting it. */
  readonly enabled: boolean;
  readonly target: SchedulerTarget;
  /** Merged over the recipe's default params (recipe trigger) or passed to the workflow. */
  readonly params: Readonly<Record<string, unknown>>;
  readonly initialMessage: string | undefined;
  /** User name the process runs as; undefined means the document's `createdBy`. */
  readonly runAs: string | undefined;
  /** Default `skip`. */
  readonly overlap: OverlapPolicy;
  /** Default `full`. */
  readonly lockMode: LockMode;
  readonly tags: readonly string[];
  /** Default `once`. */
  readonly misfire: MisfirePolicy;
  /** `catchUpWindow` as written (ISO-8601 duration), if any. */
  readonly catchUpWindow: string | undefined;
  /** `catchUpWindow` in milliseconds, if any: a backlog whose newest missed occurrence is older is skipped. */
  readonly catchUpWindowMs: number | undefined;
  /**
   * `startAt`, `endAt` (read in `zone` when written without an offset) and `maxRuns`; all
   * undefined for a scheduler without bounds, and always for a one-shot.
   */
  readonly bounds: ScheduleBounds;
  /** `jitter` as written (ISO-8601 duration), if any (issue #22; cron only). */
  readonly jitter: string | undefined;
  /** `jitter` in milliseconds: each fire is delayed by the scheduler's offset within it (`jitterOffset`). */
  readonly jitterMs: number | undefined;
  /** `pauseOnFailure`: pause after this many consecutive failed runs (issue #22; cron only). */
  readonly pauseOnFailure: number | undefined;
  /** `retry`, with its backoff as written and in milliseconds (default PT10S); undefined: one attempt. */
  readonly retry: RetryPolicy | undefined;
}

/** One reason a document was refused; defined beside {@link UrsaError}, which carries a list of them. */
export type { ValidationIssue } from '../errors/ursa-error.js';
