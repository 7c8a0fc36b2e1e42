import { z } from 'zod';
import {
  backfillBody,
  backfillResultSchema,
  fireResultSchema,
  lastRunSchema,
  PAUSE_NOTE_MAX,
  pauseResultSchema,
  refreshSchema,
  refuseFireOverrides,
  runSchema,
  schedulerDescriptionSchema,
  schedulerDetailSchema,
  schedulerSummarySchema,
  setResultSchema,
} from '../contract/index.js';
import { UrsaError } from '../errors/index.js';
import type { Runtime } from '../runtime/context.js';
import { definitionFields } from '../service/views.js';
import { formatInstant } from '../time/instant.js';
import { type AgentIdentity, AgentScope } from './agent-scope.js';
import { type AnyTool, defineTool } from './define.js';
import { documentList, documentRead } from './document-tools.js';
import { recipeGet, recipeList } from './recipe-tools.js';

export type { AgentIdentity } from './agent-scope.js';

export type { AnyTool, ToolDefinition, Toolset } from './define.js';

const SCHEDULER_EXAMPLE = [
  'description: Remind me to review the open pull requests',
  'cron: "0 0 9 * * MON-FRI"   # second minute hour day-of-month month day-of-week',
  'recipe: noop                # a recipe of the project',
  'params: { topic: pull requests }',
].join('\n');

const name = z
  .string()
  .describe('The scheduler name: letters, digits, ".", "_", "-" (the file name without .yaml).');

/**
 * A scheduler as an agent sees it: the fields of the REST listing (src/contract) an agent needs,
 * by the same names (`nextRunAt`), and `locked` when it may not change it (spec §10b). The last
 * run says when and how it ended, not which run (an agent follows runs by the logPath of a fire).
 */
const schedulerSummary = schedulerSummarySchema
  .pick({ name: true, description: true, cron: true, at: true, timezone: true, enabled: true })
  .extend({
    lastRun: lastRunSchema.pick({ at: true, state: true, outcome: true }).nullable(),
    nextRunAt: schedulerSummarySchema.shape.nextRunAt,
    paused: schedulerSummarySchema.shape.paused,
    locked: z.literal(true).optional(),
  });

const list = defineTool({
  name: 'scheduler_list',
  toolset: 'default',
  label: 'read-only',
  description:
    'List the schedulers of the current project: name, description, cron (six fields with seconds) or at (a one-time instant), time zone, whether it is enabled, its last run (lastRun: when, its state — queued, running, ended, skipped… — and its outcome, pending until it ends) and its next run (nextRunAt). Schedulers marked "locked": true are read-only for you: another one already covers that job, so do not create a duplicate. Use scheduler_get for a full YAML document.',
  input: z.object({}),
  output: z.object({ schedulers: z.array(schedulerSummary) }),
  handler: async (scope) => ({
    schedulers: (await scope.schedulers()).map(({ name, scheduler, locked, lastRun, nextRunAt, paused }) => {
      return {
        name,
        ...definitionFields(scheduler.definition),
        lastRun:
          lastRun === undefined ? null : { at: lastRun.at, state: lastRun.state, outcome: lastRun.outcome },
        nextRunAt: nextRunAt === null ? null : formatInstant(nextRunAt),
        paused,
        ...(locked ? { locked: true as const } : {}),
      };
    }),
  }),
});

const expectedVersion = z
  .number()
  .int()
  .min(0)
  .optional()
  .describe(
    'Optional: the version scheduler_get returned (0: the project has no document of this name). The change is made only while the document is still at that version; otherwise a VERSION_MISMATCH error says which version it is at, and nothing changes.',
  );

const get = defineTool({
  name: 'scheduler_get',
  toolset: 'default',
  label: 'read-only',
  description:
    'Return one scheduler of the current project (its own, or the tenant-wide one of that name): its complete YAML document, and in status what it will do and did: its next fire times (upcoming: each occurrence and firesAt, later by its jitter), the daylight-saving changes of the next 12 months that move them (dst), whether it is paused and why (paused, idle), its bounds and how many runs maxRuns still allows (runsLeft), how many runs it had per outcome (counts), and its newest runs (recentRuns: each queued, running, ended or skipped, with its outcome and run log); status is null when the document does not load. "locked": true means you may read but not change it. An unknown name answers "not found".',
  input: z.object({
    name,
    count: z.number().int().min(1).max(100).optional().describe('How many next fire times (default 5)'),
  }),
  output: schedulerDetailSchema.pick({ name: true, yaml: true }).extend({
    locked: z.boolean(),
    version: z.number().describe("The project's own document's version; 0 for a tenant-wide scheduler"),
    status: schedulerDescriptionSchema
      .pick({
        enabled: true,
        nextRunAt: true,
        paused: true,
        bounds: true,
        runsLeft: true,
        jitter: true,
        pauseOnFailure: true,
        retry: true,
        idle: true,
        upcoming: true,
        dst: true,
        counts: true,
      })
      .extend({
        recentRuns: z
          .array(
            runSchema.pick({
              correlationId: true,
              trigger: true,
              scheduledFor: true,
              state: true,
              outcome: true,
              reason: true,
              startedAt: true,
              endedAt: true,
              logPath: true,
            }),
          )
          .describe(
            'Its newest runs by occurrence: queued, running, ended or skipped, with the outcome and run log',
          ),
      })
      .nullable()
      .describe('What it will do and did; null when its document does not load (fix the YAML)'),
  }),
  handler: async (scope, input) => {
    const { body, locked, version } = await scope.scheduler(input.name);
    const d = await scope.describe(input.name, input.count ?? 5);
    const status =
      d === undefined
        ? null
        : {
            enabled: d.enabled,
            nextRunAt: d.nextRunAt,
            paused: d.paused,
            bounds: d.bounds,
            runsLeft: d.runsLeft,
            jitter: d.jitter,
            pauseOnFailure: d.pauseOnFailure,
            retry: d.retry,
            idle: d.idle,
            upcoming: d.upcoming,
            dst: d.dst,
            counts: d.counts,
            recentRuns: d.recentRuns.map((r) => ({
              correlationId: r.correlationId,
              trigger: r.trigger,
              scheduledFor: r.scheduledFor,
              state: r.state,
              outcome: r.outcome,
              reason: r.reason,
              startedAt: r.startedAt,
              endedAt: r.endedAt,
              logPath: r.logPath,
            })),
          };
    return { name: input.name, yaml: body, locked, version, status };
  },
});

const set = defineTool({
  name: 'scheduler_set',
  toolset: 'default',
  label: 'write',
  description: `Create a scheduler, or replace one you may change, from a YAML document. Required: description; exactly one of cron (Spring/Quartz, six fields including seconds, e.g. "0 0 9 * * MON-FRI") or at (one time, e.g. "2026-05-14T08:00:00"); recipe. Optional: timezone (IANA; when you leave it out, the user's own time zone is written in, so "9 AM" means their 9 AM), params, initialMessage, enabled, overlap (skip | queue | cancelPrevious), tags, lockMode (full | protected | hidden — you may restrict, never unlock). runAs may only be your user, or left out. Example:\n${SCHEDULER_EXAMPLE}\nReturns created true or false. Errors name the field and what is allowed; a LOCKED error means a person locked that scheduler.`,
  input: z.object({ name, yaml: z.string().describe('The scheduler YAML document.'), expectedVersion }),
  // `timezone`: the zone the document has now (filled in or its own), named as in scheduler_list.
  output: setResultSchema.pick({ created: true, version: true, warnings: true }).extend({
    name: z.string(),
    timezone: z.string().nullable(),
  }),
  handler: async (scope, input) => {
    const result = await scope.set(input.name, input.yaml, input.expectedVersion);
    return {
      name: input.name,
      created: result.created,
      version: result.version,
      timezone: result.timezone ?? null,
      warnings: [...result.warnings],
    };
  },
});

const remove = defineTool({
  name: 'scheduler_delete',
  toolset: 'default',
  label: 'write',
  description:
    'Delete a scheduler of the current project: it stops firing and its document goes to the trash (a person can restore it). Locked schedulers cannot be deleted (LOCKED error); an unknown name answers "not found".',
  input: z.object({ name, expectedVersion }),
  output: z.object({ name: z.string(), deleted: z.literal(true) }),
  handler: async (scope, input) => {
    await scope.delete(input.name, input.expectedVersion);
    return { name: input.name, deleted: true as const };
  },
});

const pause = defineTool({
  name: 'scheduler_pause',
  toolset: 'default',
  label: 'write',
  description:
    'Pause a scheduler of the current project with a note saying why: it stops firing (what falls due meanwhile is not run, and a fire is refused with the note) until scheduler_resume. Its document gets enabled: false; the note, you and the time are shown with it. Locked schedulers cannot be paused (LOCKED error); a tenant-wide one cannot be paused from a project.',
  input: z.object({
    name,
    note: z.string().max(PAUSE_NOTE_MAX).describe('Why, one line; people see it beside the scheduler.'),
    expectedVersion,
  }),
  output: pauseResultSchema,
  handler: (scope, input) => scope.setPaused(input.name, input.note, input.expectedVersion),
});

const resume = defineTool({
  name: 'scheduler_resume',
  toolset: 'default',
  label: 'write',
  description:
    'Resume a paused scheduler of the current project: it fires again from its next occurrence; what fell due during the pause is not run. Resuming one that is not paused changes nothing.',
  input: z.object({ name, expectedVersion }),
  output: pauseResultSchema,
  handler: (scope, input) => scope.setPaused(input.name, null, input.expectedVersion),
});

const refresh = defineTool({
  name: 'scheduler_refresh',
  toolset: 'admin',
  label: 'admin',
  description:
    'Re-read every scheduler document of the current project and register the valid ones. Returns the registered names and the documents that are invalid, with why.',
  input: z.object({}),
  output: refreshSchema.pick({ registered: true, invalid: true }),
  handler: (scope) => scope.refresh(),
});

const fire = defineTool({
  name: 'scheduler_fire',
  toolset: 'admin',
  label: 'admin',
  description:
    'Fire a scheduler now, bypassing its schedule but not its overlap policy. Returns the correlationId and the logPath of the run log; read it with document_read to follow the run (its outcome is "pending" until the run ends).',
  // Loose, so that params or another override is refused with the reason rather than dropped.
  input: z.looseObject({ name }).superRefine(refuseFireOverrides(['name'])),
  output: fireResultSchema,
  handler: (scope, input) => scope.fire(input.name),
});

const backfill = defineTool({
  name: 'scheduler_backfill',
  toolset: 'admin',
  label: 'admin',
  description:
    "Run the past occurrences of a cron scheduler that have no run yet, from `from` to `to` (both inclusive, ISO-8601 date-times such as 2026-05-14T06:00:00Z; at most 1,000 occurrences): they run oldest first, one after another, through its overlap lane, bounds and the project's run budget. Asked twice, each occurrence still runs once. Returns how many occurrences the range holds, how many were queued and how many had a run already. Each run costs what a fire costs: ask a person before a large range.",
  input: z.object({
    name,
    from: backfillBody.shape.from.describe('The oldest instant of the range, e.g. 2026-05-14T00:00:00Z'),
    to: backfillBody.shape.to.describe('The newest instant of the range, not later than now'),
  }),
  output: backfillResultSchema,
  handler: (scope, input) => scope.backfill(input.name, input.from, input.to),
});

/** Every tool of Ursa (spec §9, issue #8). */
export const TOOLS: readonly AnyTool[] = [
  list,
  get,
  set,
  remove,
  pause,
  resume,
  refresh,
  fire,
  backfill,
  recipeList,
  recipeGet,
  documentRead,
  documentList,
];

/**
 * The tools an identity may use: `default`, plus `admin` ones for admins; with `readOnly` (a
 * `read` token, decisions §6) only the `read-only` ones, so it cannot change a scheduler.
 */
export function toolsFor(admin: boolean, readOnly = false): readonly AnyTool[] {
  return TOOLS.filter(
    (tool) => (tool.toolset === 'default' || admin) && (!readOnly || tool.label === 'read-only'),
  );
}

/** A tool's result: structured output, or an error the agent can act on (never a transport failure). */
export type ToolResult =
  | { readonly ok: true; readonly output: unknown }
  | {
      readonly ok: false;
      readonly error: {
        code: string;
        message: string;
        issues?: readonly { path: string; message: string }[];
      };
    };

/** Runs a tool by name as `identity`; every failure becomes an error result naming what to change. */
export async function callTool(
  rt: Runtime,
  identity: AgentIdentity,
  tools: readonly AnyTool[],
  toolName: string,
  input: unknown,
): Promise<ToolResult> {
  const tool = tools.find((t) => t.name === toolName);
  if (tool === undefined)
    return {
      ok: false,
      error: {
        code: 'NOT_FOUND',
        message: `no tool ${JSON.stringify(toolName)}; the tools are ${tools.map((t) => t.name).join(', ')}`,
      },
    };
  const parsed = tool.input.safeParse(input ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
    return {
      ok: false,
      error: {
        code: 'ARGUMENT_INVALID',
        message: issues.map((i) => `${i.path}: ${i.message}`).join('; '),
        issues,
      },
    };
  }
  try {
    const handler = tool.handler as (scope: AgentScope, input: unknown) => Promise<unknown>;
    // One scope per call, read as the project is now: a tool sees nothing the scope filters out.
    return { ok: true, output: await handler(await AgentScope.open(rt, identity), parsed.data) };
  } catch (error) {
    if (error instanceof UrsaError) {
      return {
        ok: false,
        error: {
          code: error.code,
          message: error.message,
          ...(error.issues === undefined ? {} : { issues: error.issues }),
        },
      };
    }
    rt.log.error({ err: error, tool: toolName }, 'tool failed');
    return {
      ok: false,
      error: { code: 'INTERNAL', message: 'the tool failed inside Ursa; try again later' },
    };
  }
}
