import { describe, expect, it } from 'vitest';
import { LOST_WORK_SCAN_EVERY_MS, scansLostWork } from '../../src/decisions/lost-work.js';

// Issue #24: with several live workers and none lost, each looked for lost workers' runs and
// processes every second for nothing; a reap looks when a worker may have left work, and now and then.
describe('whether a reap looks for lost workers’ work (issue #24)', () => {
  const now = Date.parse('2026-06-01T08:00:00Z');
  const quiet = { now, lastScanAt: now - 1_000, othersDead: false, workerGone: false };

  it('looks when a worker may have left work behind, or every other worker is dead', () => {
    expect(scansLostWork({ ...quiet, workerGone: true })).toBe(true);
    expect(scansLostWork({ ...quiet, othersDead: true })).toBe(true);
  });

  it('otherwise looks once every 30 s, and first of all at a worker’s first reap', () => {
    expect(scansLostWork(quiet)).toBe(false);
    expect(scansLostWork({ ...quiet, lastScanAt: now - LOST_WORK_SCAN_EVERY_MS + 1 })).toBe(false);
    expect(scansLostWork({ ...quiet, lastScanAt: now - LOST_WORK_SCAN_EVERY_MS })).toBe(true);
    expect(scansLostWork({ ...quiet, lastScanAt: Number.NEGATIVE_INFINITY })).toBe(true);
    expect(LOST_WORK_SCAN_EVERY_MS).toBe(30_000);
  });
});
