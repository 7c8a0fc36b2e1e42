import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { claimWindowMs, MAX_CLAIM_WINDOW_MS } from '../../src/decisions/claim-window.js';

// Issue #24: a top of the hour is claimed before its instant, so that only its starts are left
// for the instant; the fire-ahead window grows with what is coming, within a bound.
describe('the fire-ahead window (issue #24)', () => {
  const base = { baseMs: 500, maxMs: MAX_CLAIM_WINDOW_MS };

  it('is the configured window when little is coming', () => {
    expect(claimWindowMs({ ...base, due: 0, perClaimMs: 0.1 })).toBe(500);
    expect(claimWindowMs({ ...base, due: 20, perClaimMs: 0.1 })).toBe(503);
  });

  it('widens by one and a half times the time the coming claims take', () => {
    // 50,000 occurrences at 0.1 ms a claim: 5 s of claims, 7.5 s with the margin.
    expect(claimWindowMs({ ...base, due: 50_000, perClaimMs: 0.1 })).toBe(8_000);
    expect(claimWindowMs({ ...base, due: 50_000, perClaimMs: 0.2 })).toBe(15_500);
  });

  it('never exceeds the longest window, and never widens a window of 0 (claims at the instant)', () => {
    expect(claimWindowMs({ ...base, due: 1_000_000, perClaimMs: 0.2 })).toBe(MAX_CLAIM_WINDOW_MS);
    expect(claimWindowMs({ baseMs: 0, maxMs: MAX_CLAIM_WINDOW_MS, due: 100_000, perClaimMs: 1 })).toBe(0);
    fc.assert(
      fc.property(
        fc.nat(10_000_000),
        fc.double({ min: 0, max: 100, noNaN: true }),
        fc.integer({ min: 1, max: 10_000 }),
        (due, perClaimMs, baseMs) => {
          const ms = claimWindowMs({ due, perClaimMs, baseMs, maxMs: MAX_CLAIM_WINDOW_MS });
          return ms >= baseMs && ms <= Math.max(baseMs, MAX_CLAIM_WINDOW_MS) && Number.isInteger(ms);
        },
      ),
    );
  });
});
