import type { EngineResult } from '../engines/engine.js';

/**
 * The reason a run gets when a worker's graceful stop ends it (decisions §5): its outcome is
 * `cancelled`, its reason this.
 */
export const SHUTDOWN_REASON = 'shutdown';

/**
 * The stop controller of a run registered as running, given the signal of a drain's final stop
 * (aborted when the grace period ended and every running process was stopped). A run that reaches
 * its registration after that — its dispatch was awaiting the store while the drain stopped the
 * others — gets a controller aborted already, so it never enters its engine: no process of it
 * outlives the stop (issue #20).
 */
export function runController(finalStop: AbortSignal): AbortController {
  const controller = new AbortController();
  if (finalStop.aborted) controller.abort(SHUTDOWN_REASON);
  return controller;
}

/**
 * The result of a run whose stop signal is aborted before its engine is entered: `stopped`, with
 * the signal's reason when it is a string. Undefined while the signal holds. Checked here, not
 * left to the engine, since an engine a library user registered may not look at the signal first.
 */
export function stoppedBeforeEntry(signal: AbortSignal): EngineResult | undefined {
  if (!signal.aborted) return undefined;
  return { status: 'stopped', reason: typeof signal.reason === 'string' ? signal.reason : 'stopped' };
}
