import { describe, expect, it } from 'vitest';
import { failureStreakReached } from '../../src/decisions/failure-streak.js';

// Issue #22 item 2: pauseOnFailure counts consecutive failed runs; a completed run starts over.
describe('pause on failure (issue #22)', () => {
  it('pauses once the newest N final outcomes all failed', () => {
    expect(failureStreakReached(3, ['failed', 'failed', 'failed'])).toBe(true);
    expect(failureStreakReached(1, ['failed'])).toBe(true);
    expect(failureStreakReached(2, ['failed', 'failed', 'completed'])).toBe(true);
  });

  it('does not pause on fewer than N runs, or when a completed run is among the newest N', () => {
    expect(failureStreakReached(3, ['failed', 'failed'])).toBe(false);
    expect(failureStreakReached(3, [])).toBe(false);
    expect(failureStreakReached(3, ['failed', 'completed', 'failed'])).toBe(false);
    expect(failureStreakReached(2, ['completed', 'failed', 'failed'])).toBe(false);
  });
});
