import { fireStory, judged } from '../../src/contract/fire-story.js';
import type { Api, RunDetail, Scope } from './api.js';

/**
 * What the editor says after a confirmed Fire (issue #23): the sentence `ursa fire` prints
 * (src/contract/fire-story.ts), once the run's lane has judged it.
 */

/** How long the editor waits for the lane's judgement, ms: the CLI's default `--wait`. */
export const FIRE_WAIT_MS = 5000;
/** How often it asks for the run meanwhile, ms. */
const STEP_MS = 200;

/**
 * The fired run `correlationId` once its lane judged it (started, waiting, folded, skipped or
 * ended), or as it stands after `waitMs` (a run no worker took yet). Asks `GET …/runs/:id`.
 *
 * @throws ApiError when the server refuses or cannot be reached.
 */
export async function firedRun(
  api: Api,
  scope: Scope,
  correlationId: string,
  waitMs = FIRE_WAIT_MS,
): Promise<RunDetail> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const run = await api.run(scope, correlationId);
    if (judged(run) || Date.now() >= deadline) return run;
    await new Promise((resolve) => window.setTimeout(resolve, STEP_MS));
  }
}

/**
 * The CLI's sentence as a sentence of the page: capitalised, with a full stop. E.g. `Fired
 * sleeper: run_… waits behind run_…, the active run, and starts when that one ends.`
 */
export function fireSentence(name: string, run: RunDetail): string {
  const story = fireStory(name, run);
  return `${story.charAt(0).toUpperCase()}${story.slice(1)}.`;
}
