import { randomBytes } from 'node:crypto';
import { recipeOf } from '../catalog/catalog.js';
import type { Engine, EngineRequest, EngineResult } from '../engines/engine.js';
import type { RecipeDefinition } from '../recipes/recipe.js';
import type { FencedRun, Run } from '../runs/run.js';
import type { Runtime } from './context.js';
import { schedulerOfRun } from './run-scheduler.js';

/** How long a service may stay silent when its engine's recipe says nothing (a library engine), ms: 5 min. */
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 300_000;

/** The path prefix of the agent callbacks on the REST API (issue #25). */
export const AGENT_CALLBACK_PREFIX = '/v1/agent-runs';

/** A new run credential: 256 random bits, base64url, after a prefix that says what it is. */
export function newRunCredential(): string {
  return `ursa_run_${randomBytes(32).toString('base64url')}`;
}

/** The callback URL of a run: `<publicUrl>/v1/agent-runs/<correlationId>`. */
export function callbackUrl(publicUrl: string, correlationId: string): string {
  return `${publicUrl.replace(/\/+$/, '')}${AGENT_CALLBACK_PREFIX}/${encodeURIComponent(correlationId)}`;
}

/**
 * The hand-off of a run's attempt to an agent service, recorded before its engine is entered
 * (issue #25): a new run credential, whose hash the store keeps with the attempt's fencing token
 * (decisions §5, §6), so that a callback that comes before the engine returned finds it. Returns
 * what the engine sends, or undefined when this server has no `publicUrl` (the engine fails the run
 * before sending anything).
 */
export async function openHandOff(
  rt: Pick<Runtime, 'repos' | 'clock' | 'settings'>,
  run: FencedRun<string>,
  recipe: RecipeDefinition,
): Promise<EngineRequest['callback']> {
  const { publicUrl } = rt.settings;
  if (publicUrl === undefined || publicUrl === '') return undefined;
  const credential = newRunCredential();
  await rt.repos.agentRuns.open({
    correlationId: run.correlationId,
    tenant: run.tenant,
    project: run.project,
    processId: run.processId,
    attempt: run.attempt,
    fencingToken: run.fencingToken,
    credential,
    heartbeatTimeoutMs: recipe.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS,
    ...(recipe.timeoutMs === undefined || recipe.timeoutMs === 0 ? {} : { timeoutMs: recipe.timeoutMs }),
    at: rt.clock.now(),
  });
  return { url: callbackUrl(publicUrl, run.correlationId), credential };
}

/**
 * Records the service's run reference once its engine returned `accepted`: from then on the run is
 * the store's (decisions §5), and its silence is measured from now.
 */
export async function recordAccepted(
  rt: Pick<Runtime, 'repos' | 'clock'>,
  run: FencedRun<string>,
  result: EngineResult,
): Promise<void> {
  if (result.status !== 'accepted' || result.reference === undefined) return;
  await rt.repos.agentRuns.accepted(run.correlationId, run.fencingToken, result.reference, rt.clock.now());
}

/** The context a handed-off run's engine is given, for its attempt of `fencingToken` and `attempt`. */
export function handOffContext(run: Run, fencingToken: number, attempt: number): EngineRequest['context'] {
  return {
    tenant: run.tenant,
    project: run.project,
    scheduler: run.name,
    correlationId: run.correlationId,
    scheduledFor: run.scheduledFor,
    runAs: run.runAs,
    fencingToken,
    attempt,
  };
}

/**
 * The recipe and engine of a handed-off run, as its scheduler names them now; undefined when they
 * cannot be loaded (its document is gone or broken, the store failed, the engine is not here).
 */
export async function handOffEngine(
  rt: Pick<Runtime, 'repos' | 'engines'>,
  run: Run,
): Promise<{ readonly recipe: RecipeDefinition; readonly engine: Engine } | undefined> {
  const scheduler = await schedulerOfRun(rt.repos, run).catch(() => undefined);
  if (scheduler?.recipe === undefined) return undefined;
  const recipe = recipeOf(scheduler);
  const engine = rt.engines.get(recipe.engine);
  return engine === undefined ? undefined : { recipe, engine };
}
