import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LockMode } from '../../src/scheduler/definition.js';
import { type AnyTool, TOOLS, type ToolResult } from '../../src/tools/toolset.js';
import {
  type AgentWorld,
  agentWorld,
  FIRST_RUN,
  TARGET,
  TARGET_LOGS,
  TARGET_OUTPUT,
  TARGET_RUN_AS,
  targetDocument,
} from '../support/agent-world.js';
import { DIALECTS } from '../support/dialects.js';

// Spec §10b: a `hidden` scheduler does not exist for agents — not its document, its run logs, its
// feed lines, its place in a refresh or a count — and a write to its name fails with the same
// LOCKED error as a write to a `protected` one, which is all an agent can learn of it. The matrix
// runs every tool of the registry (a tool added later is in it without editing this file, and
// fails here until it has inputs below) against four worlds that differ only in the target
// scheduler, which has run: absent, full, protected, hidden — in the project and in `_tenant`.

/** The paths of the target's and a visible scheduler's run logs in the world a call goes to. */
interface Aim {
  readonly targetLog: string;
  readonly visibleLog: string;
}

/**
 * Inputs for each tool, aimed at the target where the tool takes a name or a path. Every tool of
 * the registry needs an entry: a new tool fails the matrix until its author adds one.
 */
const INPUTS: Readonly<Record<string, (aim: Aim) => readonly unknown[]>> = {
  scheduler_list: () => [{}],
  scheduler_get: () => [{ name: TARGET }, { name: 'daily' }],
  scheduler_set: () => [
    { name: 'fresh', yaml: 'description: new\ncron: "0 0 9 * * *"\ntimezone: UTC\nrecipe: noop\n' },
    { name: TARGET, yaml: targetDocument('full').replace(/runAs: .*\n/, 'runAs: mia\n') },
  ],
  scheduler_delete: () => [{ name: 'fresh' }, { name: TARGET }],
  scheduler_pause: () => [{ name: TARGET, note: 'quiet week' }],
  scheduler_resume: () => [{ name: TARGET }],
  scheduler_refresh: () => [{}],
  scheduler_fire: () => [{ name: TARGET }],
  scheduler_backfill: () => [{ name: TARGET, from: '2026-06-01T06:00:00Z', to: '2026-06-01T07:00:00Z' }],
  // The target's recipe (audit-echo) prints the target's output: a recipe has no lock mode and is
  // there in every world, absent included, so reading it tells nothing of the target; aimed at
  // the built-in one and a missing one instead.
  recipe_list: () => [{}],
  recipe_get: () => [{ name: 'noop' }, { name: 'no-such-recipe' }],
  document_read: (aim) => [
    { path: aim.targetLog },
    { path: aim.visibleLog },
    { path: `_vance/scheduler/${TARGET}.yaml` },
    { path: '_vance/scheduler/daily.yaml' },
  ],
  document_list: () => [
    {},
    { prefix: TARGET_LOGS },
    { prefix: TARGET_LOGS.slice(0, -3) },
    { prefix: '_vance/logs/scheduler/daily/' },
    { prefix: '' },
    { prefix: '_vance/scheduler/' },
    { prefix: '_vance/logs/scheduler/', limit: 1 },
  ],
};

type World = LockMode | 'absent';
const WORLDS: readonly World[] = ['absent', 'full', 'protected', 'hidden'];

interface Call {
  readonly tool: AnyTool;
  readonly input: unknown;
  readonly result: ToolResult;
}

const namesTarget = (input: unknown) => JSON.stringify(input).includes(TARGET);

/** A write aimed at the target: the one call that may answer differently (LOCKED) for a hidden target. */
const writesTarget = (call: Pick<Call, 'tool' | 'input'>) =>
  call.tool.label === 'write' && namesTarget(call.input);

/** Ids and instants that differ from world to world by chance, not by what an agent is shown. */
function normalised(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value).replace(/\b(run|proc|sess)_[0-9a-f-]{36}\b/g, '$1_*'));
}

/**
 * `value` without `locked` markers and `lockMode` lines (of its document and its run logs' front
 * matter): what a `protected` scheduler shows beyond a `full` one.
 */
function unlocked(value: unknown): unknown {
  const text = JSON.stringify(value).replace(/lockMode: (full|protected)\\n/g, '');
  return JSON.parse(text, (key, v) => (key === 'locked' ? undefined : v));
}

/**
 * Every string of `result` that reveals the target, less the agent's own input quoted back (a
 * "not found" naming the name it asked for).
 */
function revealed(result: ToolResult, input: unknown): string[] {
  const echoes = Object.values(input as Record<string, unknown>)
    .filter((v): v is string => typeof v === 'string')
    .map((v) => JSON.stringify(v));
  const found: string[] = [];
  JSON.parse(JSON.stringify(result), (_key, v) => {
    if (typeof v !== 'string') return v;
    let text = v;
    for (const echo of echoes) text = text.split(echo).join('""');
    if (Object.values(input as Record<string, unknown>).includes(v)) text = '';
    for (const secret of [TARGET, TARGET_RUN_AS, TARGET_OUTPUT, TARGET_LOGS, 'hidden', 'lockMode'])
      if (text.includes(secret)) found.push(`${secret} in ${JSON.stringify(v)}`);
    return v;
  });
  return found;
}

/** Every tool with every input, in registry order; the writes aimed at the target last. */
async function callEveryTool(world: AgentWorld, aim: Aim): Promise<Call[]> {
  const planned = TOOLS.flatMap((tool) => (INPUTS[tool.name]?.(aim) ?? []).map((input) => ({ tool, input })));
  const ordered = [...planned.filter((c) => !writesTarget(c)), ...planned.filter(writesTarget)];
  const calls: Call[] = [];
  for (const { tool, input } of ordered)
    calls.push({ tool, input, result: await world.call(tool.name, input) });
  return calls;
}

describe.each(DIALECTS)('what agents learn of a scheduler by its lock mode, on %s (issue #19)', (dialect) => {
  describe.each(['project', '_tenant'] as const)('a %s scheduler that has run', (place) => {
    const worlds = new Map<World, AgentWorld>();
    const calls = new Map<World, Call[]>();
    /** The target's run log in each world that has it, as the run left it (before any tool call). */
    const targetLogs = new Map<World, string | undefined>();
    beforeAll(async () => {
      for (const w of WORLDS) {
        const world = await agentWorld(dialect, place, w);
        worlds.set(w, world);
        await world.runAt(FIRST_RUN);
        const [path] = await world.logsOf(TARGET);
        const key = { tenant: 'acme', project: 'ops', path: path ?? '' };
        targetLogs.set(w, path === undefined ? undefined : (await world.t.rt.repos.documents.get(key))?.body);
      }
      const hiddenLog = (await (worlds.get('hidden') as AgentWorld).logsOf(TARGET))[0] as string;
      for (const w of WORLDS) {
        const world = worlds.get(w) as AgentWorld;
        const [visibleLog] = await world.logsOf('daily');
        const [targetLog] = await world.logsOf(TARGET);
        calls.set(
          w,
          await callEveryTool(world, { targetLog: targetLog ?? hiddenLog, visibleLog: visibleLog as string }),
        );
      }
    }, 120_000);
    afterAll(async () => {
      for (const world of worlds.values()) await world.t.close();
    });

    it('ran the target in every world that has it, with its output in its run log', () => {
      expect(targetLogs.get('absent')).toBeUndefined();
      for (const w of ['full', 'protected', 'hidden'] as const) {
        expect(targetLogs.get(w), w).toContain(TARGET_OUTPUT);
        expect(targetLogs.get(w), w).toContain(`runAs: ${TARGET_RUN_AS}`);
      }
    });

    it.each(TOOLS.map((tool) => [tool.name, tool] as const))('%s', (toolName, tool) => {
      expect(
        INPUTS[toolName],
        `${toolName} has no inputs in INPUTS: add the inputs that aim it at the target`,
      ).toBeDefined();
      const of = (w: World) => (calls.get(w) as Call[]).filter((c) => c.tool === tool);
      const [absent, full, prot, hidden] = WORLDS.map(of) as [Call[], Call[], Call[], Call[]];
      expect(hidden.length).toBeGreaterThan(0);
      hidden.forEach((call, i) => {
        const what = `${toolName}(${JSON.stringify(call.input)})`;
        expect(revealed(call.result, call.input), what).toEqual([]);
        if (writesTarget(call)) {
          // The accepted leak of spec §10b: something locked is there. One wording for both modes.
          expect(call.result, what).toMatchObject({ ok: false, error: { code: 'LOCKED' } });
          expect(call.result, what).toEqual(prot[i]?.result);
          expect(full[i]?.result, what).not.toMatchObject({ ok: false, error: { code: 'LOCKED' } });
        } else {
          // Indistinguishable from a project without the target: same answers, same counts.
          expect(normalised(call.result), what).toEqual(normalised(absent[i]?.result));
          // A protected target is as visible as a full one, marked locked.
          expect(normalised(unlocked(prot[i]?.result)), what).toEqual(normalised(unlocked(full[i]?.result)));
        }
      });
    });
  });
});
