import type { LastRun } from '../contract/index.js';
import type { Runtime } from '../runtime/context.js';
import type { FeedLine } from '../store/feed.js';
import { formatInstant } from '../time/instant.js';
import { runStateOf } from './views.js';

/**
 * A scheduler's last run as lists show it (issue #23): the feed's newest line says when and which
 * run; the runs table says where that run is now, in the state vocabulary of every surface, so a
 * run whose newest line is its START shows `running` (or `queued`, `paused`…) where the run log
 * says `outcome: pending`. `at` stays the line's instant, as ISO-8601 UTC.
 *
 * @throws a store error.
 */
export async function lastRunView(rt: Pick<Runtime, 'repos'>, line: FeedLine): Promise<LastRun> {
  const view = { at: formatInstant(line.at), correlationId: line.traceId };
  const run = await rt.repos.runs.get(line.traceId);
  if (run === undefined) {
    // The runs table no longer holds it (a pruned history): the feed line's outcome is all there is.
    const { outcome } = line;
    const state = outcome === 'pending' ? 'running' : outcome.startsWith('skipped') ? 'skipped' : 'ended';
    return { ...view, state, outcome };
  }
  const process = run.processId === null ? undefined : await rt.repos.processes.get(run.processId);
  return { ...view, state: runStateOf(run.state, process?.status ?? null), outcome: run.outcome };
}
