import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';

export interface Loaded<T> {
  readonly data: T | undefined;
  readonly error: ApiError | undefined;
  readonly loading: boolean;
  readonly reload: () => void;
}

function asApiError(error: unknown): ApiError {
  return error instanceof ApiError
    ? error
    : new ApiError(0, 'CLIENT', error instanceof Error ? error.message : String(error));
}

/** Loads with `load` whenever `key` changes (and on `reload`); answers of outdated loads are dropped. */
export function useLoad<T>(load: () => Promise<T>, key: string): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const loader = useRef(load);
  loader.current = load;

  useEffect(() => {
    let live = true;
    setLoading(true);
    loader.current().then(
      (value) => {
        if (!live) return;
        setData(value);
        setError(undefined);
        setLoading(false);
      },
      (failure: unknown) => {
        if (!live) return;
        setError(asApiError(failure));
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, [key, tick]);

  useEffect(() => {
    setData(undefined);
  }, [key]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload };
}

/** How often a page open on something that has not ended (a run, a process) asks for it again, ms. */
export const LIVE_MS = 2000;

/** Calls `tick` every `ms` while `active`. */
export function useInterval(tick: () => void, ms: number, active: boolean): void {
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    if (!active) return;
    const id = window.setInterval(() => latest.current(), ms);
    return () => window.clearInterval(id);
  }, [ms, active]);
}

/**
 * `value` once it has stayed the same for `ms` milliseconds (the first value at once). A live
 * region fed from it speaks when typing or filtering pauses, not on every keystroke, and says
 * nothing when the value comes back to what was last said.
 */
export function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const id = window.setTimeout(() => setSettled(value), ms);
    return () => window.clearTimeout(id);
  }, [value, ms]);
  return settled;
}

export { asApiError };
