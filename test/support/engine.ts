import type { Engine, EngineRequest, EngineResult } from '../../src/engines/engine.js';

/** A process of the controlled engine, waiting for the test to end it. */
export interface HeldProcess {
  readonly request: EngineRequest;
  /** Ends the process with `result` (default: done). */
  finish(result?: EngineResult): void;
  /** Resolves when the engine saw a stop (the signal aborted), with its reason. */
  readonly stopped: Promise<string>;
}

/**
 * An engine whose processes end when the test says so (`finish`), or `stopped` when their
 * signal aborts — so overlap tests control exactly what is active, without sleeping.
 */
export function controlledEngine(
  name = 'held',
): Engine & { readonly processes: HeldProcess[]; started(): Promise<HeldProcess> } {
  const processes: HeldProcess[] = [];
  const waiters: ((p: HeldProcess) => void)[] = [];
  return {
    name,
    processes,
    started: () =>
      new Promise<HeldProcess>((resolve) => {
        waiters.push(resolve);
      }),
    run(request: EngineRequest): Promise<EngineResult> {
      return new Promise<EngineResult>((resolve) => {
        let onStop: (reason: string) => void = () => {};
        const stopped = new Promise<string>((r) => {
          onStop = r;
        });
        const held: HeldProcess = {
          request,
          finish: (result = { status: 'done' }) => resolve(result),
          stopped,
        };
        request.signal.addEventListener('abort', () => {
          const reason = typeof request.signal.reason === 'string' ? request.signal.reason : 'stopped';
          onStop(reason);
          resolve({ status: 'stopped', reason });
        });
        processes.push(held);
        waiters.shift()?.(held);
      });
    },
  };
}
