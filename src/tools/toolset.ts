import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { UrsaError } from '../errors/index.js';
import { loadProjectSchedulers } from '../runtime/catalog.js';
import type { Runtime } from '../runtime/context.js';
import { RUN_LOG_PREFIX } from '../runtime/run-log.js';
import type { LockMode } from '../scheduler/definition.js';
import { parseSchedulerDocument } from '../scheduler/document.js';
import { schedulerPath } from '../scheduler/paths.js';
import { actorOf, type Caller } from '../service/caller.js';
import { refreshProjectAs } from '../service/refresh.js';
import { fireScheduler } from '../service/runs.js';
import { deleteScheduler, setScheduler } from '../service/schedulers.js';
import { type StoredDocument, TENANT_PROJECT } from '../store/documents.js';
import { formatInstant } from '../time/instant.js';
import { agentMayWrite, agentView } from './lock-gate.js';

/** Who calls a tool: an agent acting for a user in a project (decisions §6). */
export interface AgentIdentity {
  readonly tenant: string;
  readonly project: string;
  readonly user: string;
  /** The id of the bearer token the agent connected with (MCP over HTTP), for the audit trail. */
  readonly tokenId?: string | undefined;
}

/** `default` tools for every agent; `admin` tools only for admin identities (spec §9). */
export type Toolset = 'default' | 'admin';

/** One agent tool: JSON-schema input and output (from zod), a description for a language model, a handler. */
export interface ToolDefinition<I extends z.ZodObject, O extends z.ZodObject> {
  readonly name: string;
  readonly toolset: Toolset;
  /** `read-only`, `write` or `admin` (spec §9 labels). */
  readonly label: 'read-only' | 'write' | 'admin';
  readonly description: string;
  readonly input: I;
  readonly output: O;
  readonly handler: (rt: Runtime, identity: AgentIdentity, input: z.infer<I>) => Promise<z.infer<O>>;
}

/** A tool of any input and output, as the toolset lists them. */
export type AnyTool = Omit<ToolDefinition<z.ZodObject, z.ZodObject>, 'handler'> & {
  readonly handler: (rt: Runtime, identity: AgentIdentity, input: never) => Promise<unknown>;
};

function defineTool<I extends z.ZodObject, O extends z.ZodObject>(
  tool: ToolDefinition<I, O>,
): ToolDefinition<I, O> {
  return tool;
}

const SCHEDULER_EXAMPLE = [
  'description: Remind me to review the open pull requests',
  'cron: "0 0 9 * * MON-FRI"   # second minute hour day-of-month month day-of-week',
  'recipe: noop                # a recipe of the project',
  'params: { topic: pull requests }',
].join('\n');

const name = z
  .string()
  .describe('The scheduler name: letters, digits, ".", "_", "-" (the file name without .yaml).');

const expectedVersion = z
  .number()
  .int()
  .min(0)
  .optional()
  .describe(
    'Optional: the version scheduler_get returned (0: the project has no document of this name). The change is made only while the document is still at that version; otherwise a VERSION_MISMATCH error says which version it is at, and nothing changes.',
  );

function notFound(scheduler: string, identity: AgentIdentity): UrsaError {
  return new UrsaError(
    'NOT_FOUND',
    `there is no scheduler ${JSON.stringify(scheduler)} in project ${identity.project}; scheduler_list shows the ones there are`,
    {
      field: 'name',
      value: scheduler,
    },
  );
}

function locked(scheduler: string, mode: LockMode): UrsaError {
  return new UrsaError(
    'LOCKED',
    `scheduler ${JSON.stringify(scheduler)} is locked (lockMode ${mode}): agents cannot change or delete it, and a project scheduler of the same name cannot override it. Choose another name, or ask a person to change it.`,
    { field: 'name', value: scheduler },
  );
}

/** The lock mode of a stored scheduler document; a document that does not even parse counts as locked. */
function lockModeOf(document: StoredDocument): LockMode {
  try {
    return parseSchedulerDocument(document.body, { name: 'x', path: document.path }).lockMode;
  } catch {
    try {
      const raw = (parseYaml(document.body) as { lockMode?: unknown } | null)?.lockMode;
      return raw === 'full' || raw === 'hidden' ? raw : 'protected';
    } catch {
      return 'protected';
    }
  }
}

/** The cascade-resolved scheduler document of `name` for the project (spec §3): its own, else the tenant's. */
async function resolved(
  rt: Runtime,
  identity: AgentIdentity,
  scheduler: string,
): Promise<StoredDocument | undefined> {
  const path = schedulerPath(scheduler);
  return (
    (await rt.repos.documents.get({ tenant: identity.tenant, project: identity.project, path })) ??
    (await rt.repos.documents.get({ tenant: identity.tenant, project: TENANT_PROJECT, path }))
  );
}

function callerOf(identity: AgentIdentity): Caller {
  // Agents write as their user and never as an admin: runAs is theirs alone (decisions §6).
  // Their writes are marked as an agent's in the audit trail (issue #19).
  return { ...identity, role: 'write', interface: 'mcp', agent: true };
}

const schedulerSummary = z.object({
  name: z.string(),
  description: z.string(),
  cron: z.string().optional(),
  at: z.string().optional(),
  timezone: z.string(),
  enabled: z.boolean(),
  lastRun: z.object({ at: z.string(), outcome: z.string() }).nullable(),
  nextRun: z.string().nullable(),
  locked: z.literal(true).optional(),
});

const list = defineTool({
  name: 'scheduler_list',
  toolset: 'default',
  label: 'read-only',
  description:
    'List the schedulers of the current project: name, description, cron (six fields with seconds) or at (a one-time instant), time zone, whether it is enabled, its last run (from the activity feed) and its next run. Schedulers marked "locked": true are read-only for you: another one already covers that job, so do not create a duplicate. Use scheduler_get for a full YAML document.',
  input: z.object({}),
  output: z.object({ schedulers: z.array(schedulerSummary) }),
  handler: async (rt, identity) => {
    const { schedulers } = await loadProjectSchedulers(rt.repos, identity.tenant, identity.project);
    const states = new Map(
      (await rt.repos.schedules.list(identity.tenant, identity.project)).map((s) => [s.name, s]),
    );
    const out: z.infer<typeof schedulerSummary>[] = [];
    for (const [schedulerName, s] of [...schedulers].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const view = agentView(s.definition.lockMode);
      if (!view.visible) continue;
      const d = s.definition;
      const last = await rt.repos.feed.latestForRef(
        identity.tenant,
        identity.project,
        'SCHEDULER',
        schedulerName,
      );
      const next = states.get(schedulerName)?.nextRunAt ?? null;
      out.push({
        name: schedulerName,
        description: d.description,
        ...(d.trigger.kind === 'cron' ? { cron: d.trigger.expression } : { at: d.trigger.at }),
        timezone: d.zone.id,
        enabled: d.enabled,
        lastRun: last === undefined ? null : { at: formatInstant(last.at), outcome: last.outcome },
        nextRun: next === null ? null : formatInstant(next),
        ...(view.locked ? { locked: true as const } : {}),
      });
    }
    return { schedulers: out };
  },
});

const get = defineTool({
  name: 'scheduler_get',
  toolset: 'default',
  label: 'read-only',
  description:
    'Return the complete YAML document of one scheduler of the current project (its own, or the tenant-wide one of that name). "locked": true means you may read but not change it. An unknown name answers "not found".',
  input: z.object({ name }),
  output: z.object({
    name: z.string(),
    yaml: z.string(),
    locked: z.boolean(),
    version: z.number().describe("The project's own document's version; 0 for a tenant-wide scheduler"),
  }),
  handler: async (rt, identity, input) => {
    const document = await resolved(rt, identity, input.name);
    if (document === undefined) throw notFound(input.name, identity);
    const view = agentView(lockModeOf(document));
    if (!view.visible) throw notFound(input.name, identity);
    const version = document.project === identity.project ? document.version : 0;
    return { name: input.name, yaml: document.body, locked: view.locked, version };
  },
});

const set = defineTool({
  name: 'scheduler_set',
  toolset: 'default',
  label: 'write',
  description: `Create a scheduler, or replace one you may change, from a YAML document. Required: description; exactly one of cron (Spring/Quartz, six fields including seconds, e.g. "0 0 9 * * MON-FRI") or at (one time, e.g. "2026-05-14T08:00:00"); recipe. Optional: timezone (IANA; when you leave it out, the user's own time zone is written in, so "9 AM" means their 9 AM), params, initialMessage, enabled, overlap (skip | queue | cancelPrevious), tags, lockMode (full | protected | hidden — you may restrict, never unlock). runAs may only be your user, or left out. Example:\n${SCHEDULER_EXAMPLE}\nReturns created true or false. Errors name the field and what is allowed; a LOCKED error means a person locked that scheduler.`,
  input: z.object({ name, yaml: z.string().describe('The scheduler YAML document.'), expectedVersion }),
  output: z.object({
    name: z.string(),
    created: z.boolean(),
    version: z.number(),
    timezone: z.string().nullable(),
    warnings: z.array(z.string()),
  }),
  handler: async (rt, identity, input) => {
    const existing = await resolved(rt, identity, input.name);
    if (existing !== undefined && !agentMayWrite(lockModeOf(existing)))
      throw locked(input.name, lockModeOf(existing));
    const written = parseSchedulerDocument(input.yaml, {
      name: input.name,
      path: `${identity.project}/${schedulerPath(input.name)}`,
    });
    if (written.runAs !== undefined && written.runAs !== identity.user) {
      throw new UrsaError(
        'FORBIDDEN',
        `runAs: an agent may only run schedulers as its own user (${identity.user}); leave runAs out`,
        {
          field: 'runAs',
          value: written.runAs,
          issues: [{ path: 'runAs', message: `may only be ${identity.user}, or left out` }],
        },
      );
    }
    const result = await setScheduler(rt, callerOf(identity), input.name, input.yaml, {
      expectedVersion: input.expectedVersion,
    });
    return {
      name: input.name,
      created: result.created,
      version: result.version,
      timezone: result.filledTimezone ?? written.timezone ?? null,
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
  handler: async (rt, identity, input) => {
    const existing = await resolved(rt, identity, input.name);
    if (existing === undefined) throw notFound(input.name, identity);
    const mode = lockModeOf(existing);
    if (!agentMayWrite(mode)) throw locked(input.name, mode);
    if (existing.project !== identity.project) {
      throw new UrsaError(
        'FORBIDDEN',
        `scheduler ${JSON.stringify(input.name)} is tenant-wide; an agent can delete only schedulers of its own project`,
        {
          field: 'name',
          value: input.name,
        },
      );
    }
    await deleteScheduler(rt, callerOf(identity), input.name, { expectedVersion: input.expectedVersion });
    return { name: input.name, deleted: true as const };
  },
});

const refresh = defineTool({
  name: 'scheduler_refresh',
  toolset: 'admin',
  label: 'admin',
  description:
    'Re-read every scheduler document of the current project and register the valid ones (spec §8). Returns the registered names and the documents that are invalid, with why.',
  input: z.object({}),
  output: z.object({
    registered: z.array(z.string()),
    invalid: z.array(z.object({ path: z.string(), message: z.string() })),
  }),
  handler: async (rt, identity) => {
    const result = await refreshProjectAs(rt, actorOf(callerOf(identity)), identity.tenant, identity.project);
    return {
      registered: [...result.registered],
      invalid: result.failures.map((f) => ({ path: f.path, message: f.message })),
    };
  },
});

const fire = defineTool({
  name: 'scheduler_fire',
  toolset: 'admin',
  label: 'admin',
  description:
    'Fire a scheduler now, bypassing its schedule but not its overlap policy. Returns the correlationId and the logPath of the run log; read it with document_read to follow the run (its outcome is "pending" until the run ends).',
  input: z.object({ name }),
  output: z.object({ correlationId: z.string(), logPath: z.string() }),
  handler: async (rt, identity, input) => {
    const existing = await resolved(rt, identity, input.name);
    if (existing === undefined || !agentView(lockModeOf(existing)).visible)
      throw notFound(input.name, identity);
    return fireScheduler(rt, identity.tenant, identity.project, input.name, actorOf(callerOf(identity)));
  },
});

const logPath = z
  .string()
  .describe(`A path under ${RUN_LOG_PREFIX}, e.g. the logPath scheduler_fire returned.`);

function checkLogPath(path: string): void {
  if (!path.startsWith(RUN_LOG_PREFIX) || path.includes('..')) {
    throw new UrsaError(
      'ARGUMENT_INVALID',
      `path: ${JSON.stringify(path)} is not a run log; only documents under ${RUN_LOG_PREFIX} can be read`,
      {
        field: 'path',
        value: path,
        allowed: `a path under ${RUN_LOG_PREFIX}`,
      },
    );
  }
}

const documentRead = defineTool({
  name: 'document_read',
  toolset: 'default',
  label: 'read-only',
  description: `Read one run-log document of the current project (Markdown with YAML front matter: outcome, timeline, the process output). Only paths under ${RUN_LOG_PREFIX} can be read.`,
  input: z.object({ path: logPath }),
  output: z.object({ path: z.string(), body: z.string() }),
  handler: async (rt, identity, input) => {
    checkLogPath(input.path);
    const doc = await rt.repos.documents.get({
      tenant: identity.tenant,
      project: identity.project,
      path: input.path,
    });
    if (doc === undefined)
      throw new UrsaError(
        'NOT_FOUND',
        `no run log ${JSON.stringify(input.path)}; document_list shows the ones there are`,
        { field: 'path', value: input.path },
      );
    return { path: doc.path, body: doc.body };
  },
});

const documentList = defineTool({
  name: 'document_list',
  toolset: 'default',
  label: 'read-only',
  description: `List run-log documents of the current project whose path starts with a prefix under ${RUN_LOG_PREFIX} (e.g. "${RUN_LOG_PREFIX}<scheduler>/"), newest last, at most 100.`,
  input: z.object({
    prefix: z.string().default(RUN_LOG_PREFIX).describe(`A prefix under ${RUN_LOG_PREFIX}.`),
  }),
  output: z.object({ paths: z.array(z.string()) }),
  handler: async (rt, identity, input) => {
    checkLogPath(input.prefix);
    const docs = await rt.repos.documents.list(identity.tenant, identity.project, input.prefix);
    return { paths: docs.slice(-100).map((d) => d.path) };
  },
});

/** Every tool of Ursa (spec §9, issue #8). */
export const TOOLS: readonly AnyTool[] = [list, get, set, remove, refresh, fire, documentRead, documentList];

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
    const handler = tool.handler as (
      rt: Runtime,
      identity: AgentIdentity,
      input: unknown,
    ) => Promise<unknown>;
    return { ok: true, output: await handler(rt, identity, parsed.data) };
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
