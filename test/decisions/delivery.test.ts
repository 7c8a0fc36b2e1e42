import { describe, expect, it } from 'vitest';
import { nextDeliveryAt } from '../../src/decisions/delivery.js';

// Issue #25: a stop or an answer an agent service did not take is sent again after a backoff that
// doubles from 1 s and stops growing at a minute, so a refusing service goes to the back.
describe('the backoff of a delivery to an agent service (issue #25)', () => {
  it('waits 1 s after the first failed send, doubling, at most 60 s', () => {
    const now = Date.parse('2026-06-01T08:00:00Z');
    expect([1, 2, 3, 6, 7, 8, 30].map((tries) => nextDeliveryAt(now, tries) - now)).toEqual([
      1_000, 2_000, 4_000, 32_000, 60_000, 60_000, 60_000,
    ]);
  });
});
