/**
 * The one way Ursa reads the time. Scheduling code takes instants as arguments; only the shell
 * (CLI, loop, adapters) asks a `Clock`, and tests pass a fixed or stepped one.
 */
export interface Clock {
  /** The current instant, UTC epoch milliseconds. */
  now(): number;
}

/** The wall clock of this machine. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock that answers `at` until moved; for tests and for replaying a known instant. */
export function fixedClock(at: number): Clock & { set(to: number): void; advance(ms: number): void } {
  let current = at;
  return {
    now: () => current,
    set: (to) => {
      current = to;
    },
    advance: (ms) => {
      current += ms;
    },
  };
}
