import { z } from 'zod';
import {
  id,
  instant,
  invalidDocumentSchema,
  limitQuery,
  outcome,
  pageQuery,
  runLinks,
  runState,
  segment,
} from './common.js';

/**
 * The scheduler endpoints of spec §10 (`/brain/:tenant/project/:project/scheduler…`): what they
 * answer. The agent tools (src/tools/toolset.ts) pick their fields from these, so a field has one
 * name everywhere (`nextRunAt`, never `nextRun`).
 */

/**
 * A scheduler's last run (spec §7 "last run"): when its newest feed line was written, where the run
 * is now (`state`, the vocabulary of every run view), its outcome (`pending` until it ends), its run.
 */
export const lastRunSchema = z.object({
  at: z.string(),
  state: runState,
  outcome: z.string(),
  correlationId: z.string(),
});

/**
 * Why a paused scheduler is paused: the note its pause was given, who paused it, and when
 * (ISO-8601 UTC). Written only by a pause, never from the document.
 */
export const pauseSchema = z.object({ note: z.string(), by: z.string(), at: z.string() });

/**
 * A scheduler's bounds (`startAt`, `endAt` as ISO-8601 UTC, `maxRuns`), how many runs it started
 * toward `maxRuns` (null without one), and why it fires no more: `ended` (past `endAt`),
 * `max-runs` (`maxRuns` runs started), or null while it may fire.
 */
export const boundsSchema = z.object({
  startAt: instant.nullable(),
  endAt: instant.nullable(),
  maxRuns: z.number().nullable(),
  runsStarted: z.number().nullable(),
  finished: z.enum(['ended', 'max-runs']).nullable(),
});

/** A scheduler of a project after the cascade, as `GET …/scheduler` lists it (REST, CLI, web). */
export const schedulerSummarySchema = z.object({
  name: z.string(),
  description: z.string(),
  cron: z.string().nullable(),
  at: z.string().nullable(),
  timezone: z.string(),
  enabled: z.boolean(),
  overlap: z.string(),
  lockMode: z.string(),
  tags: z.array(z.string()),
  source: z.enum(['project', 'tenant']),
  nextRunAt: z.string().nullable(),
  /** True when its next run is in the past and no worker holds a live lease to start it (issue #23). */
  overdue: z
    .boolean()
    .describe(
      'true when nextRunAt is in the past and no worker is running to start it (start one with ursa serve or ursa worker)',
    ),
  lastRun: lastRunSchema.nullable(),
  /** Null unless it is paused (disabled by a pause, which keeps a note). */
  paused: pauseSchema.nullable(),
  /** Null unless it has bounds. */
  bounds: boundsSchema.nullable(),
});

/** `GET …/scheduler`: the schedulers by name, and the documents that could not be loaded. */
/**
 * A one-shot that fired and left the list (spec §10a), as `GET …/scheduler?all=true` shows it: its
 * `at:` instant, when it fired, the run it started, and where its document lies in the trash
 * (null when it is no longer there).
 */
export const firedOneShotSchema = z.object({
  name: z.string(),
  at: instant,
  firedAt: instant,
  correlationId: z.string(),
  trashPath: z.string().nullable(),
});

/** `GET …/scheduler?all=`: `true` also lists the fired one-shots (the newest 100). */
export const schedulerListQuery = z.strictObject({
  all: z.enum(['true', 'false']).default('false').describe('true: also list fired one-shots'),
});

export const schedulerListSchema = z.object({
  schedulers: z.array(schedulerSummarySchema),
  invalid: z.array(invalidDocumentSchema),
  fired: z.array(firedOneShotSchema).optional().describe('With all=true: the fired one-shots, newest first'),
});

/** One scheduler document, as `GET …/scheduler/:name` returns it. */
export const schedulerDetailSchema = z.object({
  name: z.string(),
  path: z.string(),
  source: z.enum(['project', 'tenant']),
  version: z.number(),
  yaml: z.string(),
  createdBy: z.string(),
  updatedAt: z.string(),
  nextRunAt: z.string().nullable(),
  /** Null unless it is paused (disabled by a pause, which keeps a note). */
  paused: pauseSchema.nullable(),
});

/** The most a pause's note may hold, characters. */
export const PAUSE_NOTE_MAX = 500;

/** `POST …/scheduler/:name/pause`: why (optional; shown wherever the scheduler is). */
export const pauseBody = z.strictObject({ note: z.string().max(PAUSE_NOTE_MAX).optional() }).nullish();

/**
 * What a pause or resume did (`POST …/scheduler/:name/pause|resume`): the document's version
 * after it, and the pause now in force (null once resumed).
 */
export const pauseResultSchema = z.object({
  name: z.string(),
  version: z.number(),
  enabled: z.boolean(),
  paused: pauseSchema.nullable(),
});

/**
 * What a scheduler write did (`PUT …/scheduler/:name`): `filledTimezone` is the zone written
 * into a document that had none (spec §10c), null when it named one.
 */
export const setResultSchema = z.object({
  path: z.string(),
  created: z.boolean(),
  version: z.number(),
  warnings: z.array(z.string()),
  filledTimezone: z.string().nullable(),
});

/** `DELETE …/scheduler/:name`: where the document went in the trash. */
export const deleteResultSchema = z.object({ trashPath: z.string() });

/**
 * Why a fire takes no params or other overrides (spec §11: a fire runs exactly as the cron tick
 * would; issue #23: they were dropped silently). Says what to do instead.
 */
export const FIRE_AS_WRITTEN =
  'a fire runs the scheduler as written and takes no params or other overrides; to run it with other params, change its params: (ursa set, or the editor), or add a one-shot scheduler (at:) with those params';

/**
 * Refuses every field of a fire's input but `allowed` (REST body, tool input), naming each with
 * {@link FIRE_AS_WRITTEN}.
 */
export function refuseFireOverrides(allowed: readonly string[]) {
  return (input: Record<string, unknown>, ctx: z.RefinementCtx): void => {
    for (const key of Object.keys(input)) {
      if (!allowed.includes(key)) ctx.addIssue({ code: 'custom', path: [key], message: FIRE_AS_WRITTEN });
    }
  };
}

/** `POST …/scheduler/:name/fire`: no body, or an empty one; any field is refused with the reason. */
export const fireBody = z.record(z.string(), z.unknown()).superRefine(refuseFireOverrides([])).nullish();

/** A manual fire (spec §9 `scheduler_fire`): the run's correlation id and its run log. */
export const fireResultSchema = z.object({ correlationId: z.string(), logPath: z.string() });

/**
 * `POST …/scheduler/:name/backfill`: a past range of a cron scheduler's occurrences, both ends
 * inclusive: ISO-8601 date-times with an offset or `Z`, or local ones read in its timezone.
 */
export const backfillBody = z.strictObject({
  from: z.string().min(1).max(64),
  to: z.string().min(1).max(64),
});

/**
 * What a backfill queued: the range (ISO-8601 UTC), its occurrences, how many were queued now and
 * how many had a run already (left as they are), and the run of the oldest one queued now.
 */
export const backfillResultSchema = z.object({
  scheduler: z.string(),
  from: instant,
  to: instant,
  occurrences: z.number(),
  queued: z.number(),
  existing: z.number(),
  first: z.object({ correlationId: z.string(), scheduledFor: instant }).nullable(),
});

/** What a refresh of one project did (spec §8); `active` false: the project was unloaded (spec §3). */
export const refreshSchema = z.object({
  active: z.boolean(),
  registered: z.array(z.string()),
  invalid: z.array(invalidDocumentSchema),
});

/** `POST /brain/:tenant/scheduler/refresh`: every project's refresh, by project name. */
export const tenantRefreshSchema = z.object({
  projects: z.array(refreshSchema.extend({ project: z.string() })),
});

/** The kinds of feed line (spec §7); `AGENT`: a callback of an agent run's service (issue #25). */
export const FEED_KINDS = ['START', 'END', 'SKIPPED', 'AGENT'] as const;

/** One kind or several, comma-separated. */
const KINDS_LIST = new RegExp(`^(${FEED_KINDS.join('|')})(,(${FEED_KINDS.join('|')}))*$`);

/** One line of a scheduler's activity feed (spec §7); payload instants are ISO-8601 too. */
export const feedLineSchema = z.object({
  id: z.number(),
  at: instant,
  kind: z.enum(FEED_KINDS),
  refType: z.literal('SCHEDULER'),
  refId: z.string(),
  traceId: z.string(),
  outcome,
  logPath: z.string().nullable(),
  payload: z.record(z.string(), z.unknown()),
});

/** `GET …/scheduler/:name/events`: feed lines newest first; `nextCursor` is the next page's `before`. */
export const eventPageSchema = z.object({
  events: z.array(feedLineSchema),
  nextCursor: z.number().nullable(),
});

/**
 * `GET …/feed`: a page of the project's feed lines, newest first, below the cursor `before`,
 * narrowed by scheduler, kind (one or several, comma-separated), run, and a time range.
 */
export const feedQuery = pageQuery.extend({
  scheduler: segment.optional().describe('Only the lines of this scheduler'),
  kind: z
    .string()
    .regex(KINDS_LIST, 'START, END or SKIPPED, comma-separated')
    .optional()
    .describe('Only lines of these kinds: START, END, SKIPPED, comma-separated'),
  correlationId: id.optional().describe('Only the lines of this run'),
  since: z.string().max(64).optional().describe('Only lines at or after this ISO-8601 instant'),
  until: z.string().max(64).optional().describe('Only lines before this ISO-8601 instant'),
});

/** A run of a scheduler as the activity feed tells it. */
export const runSchema = z.object({
  correlationId: z.string(),
  scheduler: z.string(),
  trigger: z.enum(['cron', 'at', 'manual', 'backfill']),
  scheduledFor: instant,
  state: runState,
  startedAt: instant.nullable(),
  endedAt: instant.nullable(),
  outcome,
  durationMs: z.number().nullable(),
  coalesced: z.boolean(),
  coalescedUntil: instant.nullable(),
  reason: z.string().nullable(),
  attempt: z.number().int().describe('How many times the run was started: 0 until it starts'),
  processId: z.string().nullable(),
  sessionId: z.string().nullable(),
  logPath: z.string(),
  ...runLinks,
});

/**
 * `GET …/scheduler/:name/runs`: runs by occurrence, the latest first; `nextCursor` is the next
 * page's `before` (the occurrence instant of the page's last run, UTC ms).
 */
export const runPageSchema = z.object({ runs: z.array(runSchema), nextCursor: z.number().nullable() });

/** `GET …/scheduler/:name/upcoming?count=&from=`: how many fires (1-1000, 5 when absent), after which instant. */
export const upcomingQuery = z.strictObject({
  count: limitQuery(5),
  from: z.string().optional().describe('ISO-8601 instant with Z or an offset; now when absent'),
});

/**
 * A scheduler's coming fires (`GET …/scheduler/:name/upcoming`, `ursa next --scheduler`): each
 * occurrence and the instant it starts at, later by the scheduler's `jitter` (null without one).
 * `idle` says why there are none: `paused` or `disabled`, `ended` (past `endAt`), `max-runs`
 * (`maxRuns` runs started); null while it fires. A one-shot lists its `at:` instant until it fires.
 */
export const upcomingSchema = z.object({
  name: z.string(),
  timezone: z.string(),
  jitter: z.string().nullable(),
  idle: z.enum(['paused', 'disabled', 'ended', 'max-runs']).nullable(),
  fires: z.array(z.object({ occurrence: instant, firesAt: instant })),
});

/** `GET …/scheduler/:name/describe?count=`: how many coming fires to show (1-1000, 5 when absent). */
export const describeQuery = z.strictObject({ count: limitQuery(5) });

/**
 * A daylight-saving transition of the next 12 months that touches a scheduler's fire times: at
 * `transition`, the zone's offset goes from `offsetBefore` to `offsetAfter` (`+01:00`), and `count`
 * matching wall times are `shifted` (a gap: they fire later by it), fire `once` (an overlap: at
 * the first instant) or `twice` (an overlap, with an hour field matching every hour).
 */
export const dstNoteSchema = z.object({
  transition: instant,
  effect: z.enum(['shifted', 'once', 'twice']),
  offsetBefore: z.string(),
  offsetAfter: z.string(),
  count: z.number(),
});

/** A scheduler's runs as the store keeps them: how many, per outcome, and how many coalesced. */
export const runCountsSchema = z.object({
  runs: z.number(),
  byOutcome: z.record(z.string(), z.number()),
  coalesced: z.number(),
});

/**
 * One scheduler described (`GET …/scheduler/:name/describe`, `ursa describe`): what the list says
 * of it, its jitter, its next fires (`upcoming`, each occurrence with its jittered start, within
 * its bounds; `idle` says why there are none), the DST transitions that touch them, how many runs
 * `maxRuns` still allows (null without it), its run counts and its newest runs.
 */
export const schedulerDescriptionSchema = schedulerSummarySchema.extend({
  jitter: z.string().nullable(),
  pauseOnFailure: z.number().nullable(),
  /** `retry`: a run's attempts in all and the first backoff (ISO-8601); null: one attempt. */
  retry: z.object({ attempts: z.number(), backoff: z.string() }).nullable(),
  idle: upcomingSchema.shape.idle,
  upcoming: upcomingSchema.shape.fires,
  dst: z.array(dstNoteSchema),
  runsLeft: z.number().nullable(),
  counts: runCountsSchema,
  recentRuns: z.array(runSchema),
});
