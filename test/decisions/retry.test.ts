import { describe, expect, it } from 'vitest';
import { decideRetry, retryAt } from '../../src/decisions/retry.js';

// Issue #22 item 6: when a failed attempt's run is tried again, and whether its lane lets it.
const policy = { attempts: 4, backoff: 'PT10S', backoffMs: 10_000 };
const t0 = Date.parse('2026-06-01T09:00:00Z');

describe('retryAt (issue #22 retries)', () => {
  it('doubles the backoff from the given step with each failed attempt', () => {
    expect(retryAt(policy, 1, t0, null)).toBe(t0 + 10_000);
    expect(retryAt(policy, 2, t0, null)).toBe(t0 + 20_000);
    expect(retryAt(policy, 3, t0, null)).toBe(t0 + 40_000);
  });

  it('allows attempts in all, the first included: none after the last', () => {
    expect(retryAt(policy, 4, t0, null)).toBeUndefined();
    expect(retryAt({ ...policy, attempts: 1 }, 1, t0, null)).toBeUndefined();
    expect(retryAt(undefined, 1, t0, null)).toBeUndefined();
  });

  it('never waits past the next occurrence', () => {
    expect(retryAt(policy, 3, t0, t0 + 30_000)).toBe(t0 + 30_000);
    expect(retryAt(policy, 1, t0, t0 + 30_000)).toBe(t0 + 10_000);
    // A next occurrence at or before the failure (a cron that fires no more is null) caps nothing.
    expect(retryAt(policy, 1, t0, t0)).toBe(t0 + 10_000);
  });
});

describe('decideRetry (issue #22 retries)', () => {
  it('starts the next attempt of a scheduler still there, not paused, not stopped, within its budget', () => {
    expect(decideRetry('present', false, undefined)).toBe('start');
  });

  it('refuses it in the admission order: deleted, then pause, then a stop asked, then budget', () => {
    for (const stop of [false, true])
      for (const budget of [undefined, 'runs-per-hour', 'runs-per-day'] as const) {
        expect(decideRetry('deleted', stop, budget)).toBe('deleted');
        expect(decideRetry('disabled', stop, budget)).toBe('disabled');
        expect(decideRetry('present', true, budget)).toBe('stopped');
      }
    expect(decideRetry('present', false, 'runs-per-hour')).toBe('runs-per-hour');
    expect(decideRetry('present', false, 'runs-per-day')).toBe('runs-per-day');
  });
});
