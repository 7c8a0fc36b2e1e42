import { z } from 'zod';
import { LockMode, MisfirePolicy, OverlapPolicy } from './definition.js';
import {
  atField,
  cronField,
  durationField,
  nameString,
  nonBlankString,
  paramsField,
  timezoneField,
} from './fields.js';

/** The largest `maxRuns` a scheduler may set. */
export const MAX_RUNS_LIMIT = 1_000_000_000;

/** The largest `pauseOnFailure` a scheduler may set: consecutive failed runs. */
export const PAUSE_ON_FAILURE_LIMIT = 1000;

/** The most attempts `retry.attempts` may set, the first included. */
export const RETRY_ATTEMPTS_LIMIT = 10;

/**
 * `retry:` (issue #22): how many attempts a run has in all (`attempts`, the first included) and
 * the wait before the first retry (`backoff`, ISO-8601; default PT10S), doubled before each next.
 */
export const retryField = z.strictObject({
  attempts: z.int().min(1).max(RETRY_ATTEMPTS_LIMIT),
  backoff: durationField.optional(),
});

/**
 * The scheduler document's fields (spec §2, §10a, §10b; decisions §4; the bounds, jitter and pauseOnFailure of issue #22)
 * with their types and defaults. Strict: any other field is an error. The cross-field rules (exactly one of
 * `cron`/`at`, exactly one of `recipe`/`workflow`, bounds, jitter and pauseOnFailure only on a cron schedule and
 * `startAt` before `endAt`) are checked beside it, in `document.ts`.
 */
export const schedulerSchema = z.strictObject({
  description: nonBlankString,
  cron: cronField.optional(),
  at: atField.optional(),
  timezone: timezoneField.optional(),
  enabled: z.boolean().default(true),
  recipe: nameString.optional(),
  workflow: nameString.optional(),
  params: paramsField,
  initialMessage: z.string().optional(),
  runAs: nonBlankString.optional(),
  overlap: z.enum(OverlapPolicy).default(OverlapPolicy.skip),
  lockMode: z.enum(LockMode).default(LockMode.full),
  tags: z.array(nonBlankString).default(() => []),
  misfire: z.enum(MisfirePolicy).default(MisfirePolicy.once),
  catchUpWindow: durationField.optional(),
  startAt: atField.optional(),
  endAt: atField.optional(),
  maxRuns: z.int().min(1).max(MAX_RUNS_LIMIT).optional(),
  jitter: durationField.optional(),
  pauseOnFailure: z.int().min(1).max(PAUSE_ON_FAILURE_LIMIT).optional(),
  retry: retryField.optional(),
});

/** The scheduler document's fields in the order of spec §2, then decisions §4, then the bounds, jitter, pauseOnFailure and retry. */
export const SCHEDULER_FIELDS: readonly string[] = Object.keys(schedulerSchema.shape);

/** A scheduler document that passed {@link schedulerSchema}, defaults applied. */
export type SchedulerFields = z.output<typeof schedulerSchema>;
