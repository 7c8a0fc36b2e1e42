import { expect } from 'vitest';
import type { EngineRequest } from '../../src/engines/engine.js';
import { buildApp } from '../../src/http/app.js';
import type { RecipeDefinition } from '../../src/recipes/recipe.js';
import type { ProcessRecord } from '../../src/store/processes.js';
import type { Run } from '../../src/store/runs.js';
import { applyAndFireOnce } from './fire-once.js';
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

/** What {@link httpEngineRequest} takes from its defaults unless given. */
export interface HttpEngineRequestOptions {
  /** Recipe fields over the defaults (`hook`, 5 s timeout, no headers). */
  readonly recipe?: Partial<RecipeDefinition>;
  readonly params?: Readonly<Record<string, unknown>>;
  readonly initialMessage?: string;
  readonly signal?: AbortSignal;
  /** Context fields over the defaults (scheduler `hook` of `acme/ops`, run `run_hook`). */
  readonly context?: Partial<EngineRequest['context']>;
}

/**
 * A request of the `http` engine for a hand-built recipe POSTing to `url` (scheduler `hook` of
 * `acme/ops`), with a 5 s timeout: long enough that an answer the timeout gave would show as one.
 */
export function httpEngineRequest(
  url: string | undefined,
  options: HttpEngineRequestOptions = {},
): EngineRequest {
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
      ...options.recipe,
    },
    params: options.params ?? {},
    initialMessage: options.initialMessage,
    context: {
      tenant: 'acme',
      project: 'ops',
      scheduler: 'hook',
      correlationId: 'run_hook',
      scheduledFor: Date.parse('2026-06-01T08:00:00Z'),
      runAs: 'ada',
      ...options.context,
    },
    signal: options.signal ?? new AbortController().signal,
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
  const run = await applyAndFireOnce(t, { recipeName: 'hook', recipe, scheduler: 'hook', user: 'ada' });
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
