import { runRow } from '../../src/store/index.js';

/** The row a claim of worker `wrk_test` inserts for `key`'s occurrence at `scheduledFor` (UTC ms). */
export function claimedRunRow(
  key: { readonly tenant: string; readonly project: string; readonly name: string },
  correlationId: string,
  scheduledFor: number,
) {
  return runRow({
    correlationId,
    ...key,
    scheduledFor,
    trigger: 'cron',
    coalesced: false,
    coalescedUntil: null,
    claimedAt: scheduledFor,
    state: 'claimed',
    outcome: 'pending',
    reason: null,
    runAs: 'alice',
    sessionId: null,
    processId: null,
    logPath: `log-${correlationId}`,
    startedAt: null,
    endedAt: null,
    workerId: 'wrk_test',
    lockMode: 'full',
    attempt: 0,
    fencingToken: null,
    queuedAt: null,
    waitingBehind: null,
    foldedInto: null,
  });
}
