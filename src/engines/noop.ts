import type { Engine, EngineResult } from './engine.js';
import { stopReason } from './stop-reason.js';

/**
 * The `noop` engine (decisions §2): runs nothing and ends `done` at once, or `stopped` (reason as
 * for every engine: the abort reason when it is a string, else `stopped`) when the request's
 * signal is already aborted. For schedulers that only need the feed and run-log lines, and tests.
 */
export const noopEngine: Engine = {
  name: 'noop',
  run: async (request): Promise<EngineResult> =>
    request.signal.aborted ? { status: 'stopped', reason: stopReason(request.signal) } : { status: 'done' },
};
