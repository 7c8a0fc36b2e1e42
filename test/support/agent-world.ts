import type { LockMode } from '../../src/scheduler/definition.js';
import type { Caller } from '../../src/service/caller.js';
import { setScheduler } from '../../src/service/schedulers.js';
import { libraryActor } from '../../src/store/audit.js';
import type { StoreDialect } from '../../src/store/index.js';
import { type AgentIdentity, callTool, TOOLS, type ToolResult } from '../../src/tools/toolset.js';
import { shellRecipe } from './project.js';
import { type TestRuntime, testRuntime } from './runtime.js';

/**
 * A project where a person set up schedulers and they ran, for tests of what an agent sees of it
 * (spec §10b). Everything an agent must never learn of the target scheduler is distinctive, so a
 * test can look for it in any answer: its name, its `runAs` user and its process output.
 */
export const T = 'acme';
export const P = 'ops';
export const TARGET = 'audit-7f3q';
export const TARGET_RUN_AS = 'auditor-zq41';
export const TARGET_OUTPUT = 'AUDIT-OUTPUT-91c2';
/** The target's run-log folder (spec §9a). */
export const TARGET_LOGS = `_vance/logs/scheduler/${TARGET}/`;
/** The instant the schedulers first fire (once a day, at 08:00:10 UTC). */
export const FIRST_RUN = '2026-06-01T08:00:10.002Z';
export const agent: AgentIdentity = { tenant: T, project: P, user: 'mia' };

/** A person (an admin through REST or the CLI): lock modes do not apply to people. */
export const person = (project: string): Caller => ({ tenant: T, project, user: 'ada', role: 'admin' });

/** The target's document: daily at 08:00:10 UTC, as TARGET_RUN_AS, printing TARGET_OUTPUT. */
export function targetDocument(lockMode: LockMode): string {
  return `description: compliance audit\ncron: "10 0 8 * * *"\ntimezone: UTC\nrecipe: audit-echo\nrunAs: ${TARGET_RUN_AS}\nlockMode: ${lockMode}\n`;
}

/** A visible scheduler that also runs daily at 08:00:10 UTC. */
export const DAILY_DOCUMENT =
  'description: daily digest\ncron: "10 0 8 * * *"\ntimezone: UTC\nrecipe: noop\n';

/** A test runtime holding the world, and the agent's view of it. */
export interface AgentWorld {
  readonly t: TestRuntime;
  /** Calls a tool of the whole registry as {@link agent}. */
  call(tool: string, input: unknown): Promise<ToolResult>;
  /** Sets the clock to `at`, ticks a worker and waits until its runs ended. */
  runAt(at: string): Promise<void>;
  /** The run-log paths of scheduler `name` in project P, as the store has them. */
  logsOf(name: string): Promise<string[]>;
}

/**
 * A fresh world on `dialect`: the `audit-echo` recipe in `_tenant`, the user TARGET_RUN_AS, the
 * visible scheduler `daily` in P, and the target in `place` with `lockMode` unless it is
 * `absent` (the world an agent must not be able to tell apart from the hidden one).
 */
export async function agentWorld(
  dialect: StoreDialect,
  place: 'project' | '_tenant',
  target: LockMode | 'absent',
): Promise<AgentWorld> {
  const t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
  const { rt } = t;
  await rt.repos.users.ensure(T, TARGET_RUN_AS, 0);
  await rt.repos.documents.put(
    { tenant: T, project: '_tenant', path: '_vance/recipes/audit-echo.yaml' },
    shellRecipe(`echo ${TARGET_OUTPUT}`),
    libraryActor('ada'),
    0,
  );
  await setScheduler(rt, person(P), 'daily', DAILY_DOCUMENT);
  if (target !== 'absent')
    await setScheduler(rt, person(place === 'project' ? P : '_tenant'), TARGET, targetDocument(target));
  const worker = t.worker();
  await worker.bootstrap();
  return {
    t,
    call: (tool, input) => callTool(rt, agent, TOOLS, tool, input),
    runAt: async (at) => {
      t.clock.set(Date.parse(at));
      await worker.tick();
      await worker.executor.settled();
    },
    logsOf: async (name) =>
      (await rt.repos.documents.list(T, P, `_vance/logs/scheduler/${name}/`)).map((d) => d.path),
  };
}
