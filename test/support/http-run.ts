import { expect } from 'vitest';
import type { EngineRequest } from '../../src/engines/engine.js';
import { buildApp } from '../../src/http/app.js';
import type { RecipeDefinition } from '../../src/recipes/recipe.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import type { ProcessRecord } from '../../src/store/processes.js';
import type { Run } from '../../src/store/runs.js';
import { cronScheduler, projectFolder } from './project.js';
import type { TestRuntime } from './runtime.js';

/** An `http` recipe document POSTing to `url`, with `secretHeaders` (header → variable) when given. */
export function httpRecipe(
  url: string,
  secretHeaders: Record<string, string> = {},
  timeout = 'PT5S',
): string {
  const lines = [
    'description: posts to a hook',
    'engine: http',
    `url: ${JSON.stringify(url)}`,
    `timeout: ${timeout}`,
  ];
  if (Object.keys(secretHeaders).length > 0) {
    lines.push('secretHeaders:', ...Object.entries(secretHeaders).map(([h, v]) => `  ${h}: ${v}`));
  }
  return `${lines.join('\n')}\n`;
}

/**
 * A request of the `http` engine for a hand-built recipe POSTing to `url` (scheduler `hook` of
 * `acme/ops`), with a 5 s timeout: long enough that an answer the timeout gave would show as one.
 */
export function httpEngineRequest(url: string, recipe: Partial<RecipeDefinition> = {}): EngineRequest {
  return {
    processId: 'proc-hook',
    recipe: {
      name: 'hook',
      description: 'posts to a hook',
      engine: 'http',
      params: {},
      command: undefined,
      url,
      headers: undefined,
      secretHeaders: undefined,
      timeoutMs: 5000,
      source: 'project',
      ...recipe,
    },
    params: {},
    initialMessage: undefined,
    context: {
      tenant: 'acme',
      project: 'ops',
      scheduler: 'hook',
      correlationId: 'run_hook',
      scheduledFor: Date.parse('2026-06-01T08:00:00Z'),
      runAs: 'ada',
    },
    signal: new AbortController().signal,
  };
}

/** Everything one run of an `http` recipe left where people and agents can read it. */
export interface HttpRunTrace {
  readonly run: Run;
  readonly process: ProcessRecord | undefined;
  /** The run-log document's body. */
  readonly log: string;
  /** The feed lines of the scheduler, as JSON. */
  readonly feed: string;
  /** The REST answers about the run: the run with its log, the process, the scheduler's runs and events. */
  readonly api: string;
}

/**
 * Applies `recipe` as `_vance/recipes/hook.yaml` with a scheduler `hook` firing every 10 s to
 * project `acme/ops`, fires it once through a real worker tick on the stepped clock of `t`, and
 * collects what the run left: run and process records, run log, feed and REST answers.
 */
export async function runHttpRecipeOnce(t: TestRuntime, recipe: string): Promise<HttpRunTrace> {
  const entries = await applyDirectory(
    t.rt,
    projectFolder({
      '_vance/recipes/hook.yaml': recipe,
      '_vance/scheduler/hook.yaml': cronScheduler('*/10 * * * * *', 'hook'),
    }),
    'acme',
    'ops',
    libraryActor('ada'),
  );
  expect(entries.map((e) => e.status)).toEqual(['created', 'created']);
  const worker = t.worker();
  await worker.bootstrap();
  t.clock.set(t.clock.now() + 10_000);
  expect(await worker.tick()).toMatchObject({ fired: 1 });
  await worker.executor.settled();
  const [run] = await t.rt.repos.runs.listForScheduler('acme', 'ops', 'hook', 10);
  if (run === undefined) throw new Error('the scheduler did not run');
  const process = run.processId === null ? undefined : await t.rt.repos.processes.get(run.processId);
  const log =
    (await t.rt.repos.documents.get({ tenant: 'acme', project: 'ops', path: run.logPath }))?.body ?? '';
  const feed = JSON.stringify(await t.rt.repos.feed.listForRef('acme', 'ops', 'SCHEDULER', 'hook', 100));
  const { secret } = await t.rt.repos.tokens.create(
    { tenant: 'acme', role: 'admin', user: 'ada' },
    t.clock.now(),
  );
  const app = await buildApp({ rt: t.rt });
  try {
    const base = '/brain/acme/project/ops';
    const answers: string[] = [];
    for (const url of [
      `${base}/runs/${run.correlationId}`,
      `${base}/processes/${run.processId}`,
      `${base}/scheduler/hook/runs`,
      `${base}/scheduler/hook/events`,
    ]) {
      const response = await app.inject({
        method: 'GET',
        url,
        headers: { authorization: `Bearer ${secret}` },
      });
      expect(response.statusCode, url).toBe(200);
      answers.push(response.body);
    }
    return { run, process, log, feed, api: answers.join('\n') };
  } finally {
    await app.close();
  }
}
