import type { Insertable } from 'kysely';
import { feedRow } from '../store/feed.js';
import type { Run } from '../store/runs.js';
import type { FeedTable } from '../store/schema.js';
import type { Runtime } from './context.js';
import { feedLineOf } from './recorder.js';

/**
 * The START line a lost run is missing, to be written before its END line (issue #20): every run
 * recorded started has one, also one whose worker died between its start and its START line
 * (a worker of an earlier version: this one writes both in the start's transaction). A recipe
 * run's process row comes in the same transaction as its START line, so a missing process row is
 * a missing START line (one read by key); a run without a process (a workflow target) is looked
 * up in the feed. Undefined when the run has its START line.
 */
export async function missingStartLine(rt: Runtime, run: Run): Promise<Insertable<FeedTable> | undefined> {
  const { repos } = rt;
  const opened =
    run.processId === null
      ? await repos.feed.hasLine(run, 'START')
      : (await repos.processes.get(run.processId)) !== undefined;
  if (opened) return undefined;
  return feedRow(
    feedLineOf(run, 'START', run.startedAt ?? run.claimedAt, 'pending', {
      processId: run.processId,
      sessionId: run.sessionId,
      runAs: run.runAs,
      // Written by the recovery, not by the worker that started the run.
      recovered: true,
    }),
  );
}
