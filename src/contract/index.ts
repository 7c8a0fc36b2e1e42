/**
 * The REST contract of `ursa serve`, defined once (issue #21 item 4): the zod schemas of every
 * request body, query, path and response view, and the TypeScript types inferred from them. The
 * routes (src/http/routes) validate and serialize with these schemas, the clients (src/client)
 * and the web page (web/src/api.ts, type-only) use the types, the agent tools (src/tools) pick
 * their fields from them. Views carry instants as ISO-8601 UTC text and absent values as `null`.
 *
 * A low layer: imports zod and nothing of Ursa but its own files, so any layer may import it and
 * the web bundle can take its types without node code.
 */
import type { z } from 'zod';
import type {
  agentCallbackResultSchema,
  agentCompleteBody,
  agentOutputBody,
  agentStatusBody,
} from './agent-runs.js';
import type { meSchema } from './caller.js';
import type { problemSchema } from './common.js';
import type {
  documentPageSchema,
  documentSchema,
  documentSummarySchema,
  historyEntrySchema,
  historySchema,
} from './documents.js';
import type {
  answerBody,
  answerResultSchema,
  inboxItemSchema,
  inboxPageSchema,
  markReadBody,
  markReadResultSchema,
} from './inbox.js';
import type { recipeDetailSchema, recipeListSchema, recipeSummarySchema } from './recipes.js';
import type { processSchema, runDetailSchema, stopBody, stopResultSchema } from './runs.js';
import type {
  backfillBody,
  backfillResultSchema,
  boundsSchema,
  deleteResultSchema,
  eventPageSchema,
  feedLineSchema,
  firedOneShotSchema,
  fireResultSchema,
  lastRunSchema,
  pauseBody,
  pauseResultSchema,
  pauseSchema,
  refreshSchema,
  runPageSchema,
  runSchema,
  schedulerDescriptionSchema,
  schedulerDetailSchema,
  schedulerListSchema,
  schedulerSummarySchema,
  setResultSchema,
  tenantRefreshSchema,
  upcomingSchema,
} from './schedulers.js';
import type {
  workflowListSchema,
  workflowRunSchema,
  workflowSetResultSchema,
  workflowStartBody,
  workflowStopResultSchema,
} from './workflows.js';

export * from './agent-runs.js';
export * from './caller.js';
export * from './common.js';
export * from './documents.js';
export * from './inbox.js';
export * from './recipes.js';
export * from './runs.js';
export * from './schedulers.js';
export * from './versions.js';
export * from './vocabulary.js';
export * from './workflows.js';

/** An `application/problem+json` answer (RFC 9457) with Ursa's stable `code`. */
export type Problem = z.infer<typeof problemSchema>;
export type AgentStatusBody = z.infer<typeof agentStatusBody>;
export type AgentOutputBody = z.infer<typeof agentOutputBody>;
export type AgentCompleteBody = z.infer<typeof agentCompleteBody>;
export type AgentCallbackResult = z.infer<typeof agentCallbackResultSchema>;
export type AnswerView = z.infer<typeof answerResultSchema>;

/** A scheduler's last run in a listing. */
export type LastRun = z.infer<typeof lastRunSchema>;
/** Why a paused scheduler is paused, who paused it and when. */
export type Pause = z.infer<typeof pauseSchema>;
/** `POST …/scheduler/:name/pause`. */
export type PauseBody = z.infer<typeof pauseBody>;
/** What a pause or resume did. */
export type PauseResult = z.infer<typeof pauseResultSchema>;
/** A scheduler's bounds, what it started toward them, and whether it fires no more. */
export type Bounds = z.infer<typeof boundsSchema>;
/** A scheduler of a project after the cascade (`GET …/scheduler`). */
export type SchedulerSummary = z.infer<typeof schedulerSummarySchema>;
/** `GET …/scheduler`. */
export type SchedulerList = z.infer<typeof schedulerListSchema>;
export type MeView = z.infer<typeof meSchema>;
export type FiredOneShot = z.infer<typeof firedOneShotSchema>;
/** `GET …/scheduler/:name`. */
export type SchedulerDetail = z.infer<typeof schedulerDetailSchema>;
/** `GET …/scheduler/:name/describe`. */
export type SchedulerDescription = z.infer<typeof schedulerDescriptionSchema>;
/** `GET …/scheduler/:name/upcoming`. */
export type Upcoming = z.infer<typeof upcomingSchema>;
/** `PUT …/scheduler/:name`. */
export type SetView = z.infer<typeof setResultSchema>;
/** `DELETE …/scheduler/:name`. */
export type DeleteView = z.infer<typeof deleteResultSchema>;
/** `POST …/scheduler/:name/fire`. */
export type FireView = z.infer<typeof fireResultSchema>;
/** `POST …/scheduler/:name/backfill`: the range asked. */
export type BackfillBody = z.infer<typeof backfillBody>;
/** `POST …/scheduler/:name/backfill`: what was queued. */
export type BackfillView = z.infer<typeof backfillResultSchema>;
/** `POST …/scheduler/refresh`. */
export type ProjectRefreshView = z.infer<typeof refreshSchema>;
/** `POST /brain/:tenant/scheduler/refresh`. */
export type TenantRefreshView = z.infer<typeof tenantRefreshSchema>;
/** One feed line of a scheduler (spec §7). */
export type EventView = z.infer<typeof feedLineSchema>;
/** `GET …/scheduler/:name/events`. */
export type EventPage = z.infer<typeof eventPageSchema>;
/** One run from the activity feed (spec §7). */
export type RunView = z.infer<typeof runSchema>;
/** `GET …/scheduler/:name/runs`. */
export type RunPage = z.infer<typeof runPageSchema>;

/** `GET …/runs/:correlationId`: a run from the runs table with its log. */
export type RunDetail = z.infer<typeof runDetailSchema>;
/** `GET …/processes/:id`. */
export type ProcessView = z.infer<typeof processSchema>;
/** The body of `POST …/processes/:id/stop` as a caller sends it. */
export type StopBody = z.input<typeof stopBody>;
/** `POST …/processes/:id/stop`. */
export type StopView = z.infer<typeof stopResultSchema>;

/** A document as listed (without its body). */
export type DocumentSummary = z.infer<typeof documentSummarySchema>;
/** A document with its body (`GET …/documents/<path>`). */
export type DocumentView = z.infer<typeof documentSchema>;
/** `GET …/documents`. */
export type DocumentPage = z.infer<typeof documentPageSchema>;
/** One entry of a document's history (issue #19). */
export type HistoryEntryView = z.infer<typeof historyEntrySchema>;
/** `GET …/documents/<path>/history`. */
export type HistoryPage = z.infer<typeof historySchema>;

/** An inbox item (decisions §2). */
export type InboxItemView = z.infer<typeof inboxItemSchema>;
/** `GET /brain/:tenant/inbox`. */
export type InboxItemPage = z.infer<typeof inboxPageSchema>;
/** The body of `POST /brain/:tenant/inbox/read` as a caller sends it. */
export type MarkReadBody = z.input<typeof markReadBody>;
/** `POST /brain/:tenant/inbox/read`. */
export type MarkReadView = z.infer<typeof markReadResultSchema>;
/** The body of `POST /brain/:tenant/inbox/:id/answer` as a caller sends it (issue #25). */
export type AnswerBody = z.input<typeof answerBody>;

/** `GET …/workflows`. */
export type WorkflowList = z.infer<typeof workflowListSchema>;
/** `PUT …/workflows/:name`. */
export type WorkflowSetView = z.infer<typeof workflowSetResultSchema>;
/** The body of `POST …/workflows/:name/runs` as a caller sends it. */
export type WorkflowStartBody = z.input<typeof workflowStartBody>;
/** A workflow run with its steps. */
export type WorkflowRunView = z.infer<typeof workflowRunSchema>;
/** `POST …/workflow-runs/:id/stop`. */
export type WorkflowStopView = z.infer<typeof workflowStopResultSchema>;

/** A recipe a project can name (`GET …/recipes`). */
export type RecipeSummary = z.infer<typeof recipeSummarySchema>;
/** `GET …/recipes`. */
export type RecipeList = z.infer<typeof recipeListSchema>;
/** `GET …/recipes/:name`. */
export type RecipeDetail = z.infer<typeof recipeDetailSchema>;
