import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  claimWakeAt,
  HELD_POLL_MS,
  ownedSlots,
  SLOT_COUNT,
  slotOf,
  stealBefore,
} from '../../src/decisions/partition.js';

// Issue #24: the live workers share the schedulers' slots out evenly, each slot to one of them,
// so that one scheduler's consecutive occurrences go to one worker and workers do not compete.
const ids = fc.uniqueArray(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 80 });

describe('the slots of schedulers and who owns them (issue #24)', () => {
  it('gives a scheduler a stable slot within the slot count', () => {
    // Frozen with migration 0024: a change here needs a migration that recomputes the column.
    expect(slotOf({ tenant: 'acme', project: 'ops', name: 'nightly' })).toBe(
      slotOf({ tenant: 'acme', project: 'ops', name: 'nightly' }),
    );
    expect(
      ['a', 'b', 'c', 'nightly'].map((name) => slotOf({ tenant: 'acme', project: 'ops', name })),
    ).toEqual([56, 49, 30, 38]); // FNV-1a, computed independently
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), (tenant, project, name) => {
        const slot = slotOf({ tenant, project, name });
        return Number.isInteger(slot) && slot >= 0 && slot < SLOT_COUNT;
      }),
    );
  });

  it('spreads many schedulers over every slot', () => {
    const counts = new Array(SLOT_COUNT).fill(0);
    for (let i = 0; i < 100_000; i++)
      counts[slotOf({ tenant: 'default', project: `p${i % 100}`, name: `s${i}` })]++;
    expect(Math.min(...counts)).toBeGreaterThan(1_400);
    expect(Math.max(...counts)).toBeLessThan(1_750);
  });

  it('gives every slot to exactly one of the live workers, evenly', () => {
    fc.assert(
      fc.property(ids, (live) => {
        const owned = live.map((id) => ownedSlots(id, live));
        if (live.length === 1) return owned[0] === undefined;
        const all = owned.flatMap((slots) => slots ?? []).sort((x, y) => x - y);
        const sizes = owned.map((slots) => slots?.length ?? 0);
        expect(all).toEqual([...Array(SLOT_COUNT).keys()]);
        expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
        return true;
      }),
    );
  });

  it('counts the asking worker live even when the list it read lacks it (it has not heartbeated yet)', () => {
    expect(ownedSlots('w1', [])).toBeUndefined();
    expect(ownedSlots('w2', ['w1'])).toEqual(ownedSlots('w2', ['w1', 'w2']));
    expect(ownedSlots('w2', ['w1'])).toHaveLength(SLOT_COUNT / 2);
  });

  it('lets any worker claim an occurrence overdue by longer than a lost worker keeps its lease', () => {
    expect(stealBefore(100_000, 7_000)).toBe(93_000);
  });

  describe('when a worker next has an occurrence to claim', () => {
    const base = { now: 100_000, aheadMs: 500, deadAfterMs: 7_000, heldByOthers: false };

    it("wakes for its own slots' earliest, ahead by the claim window, not for other workers' due ones", () => {
      // Another slot is due now, its own in 3 s: it sleeps until then less the window.
      expect(claimWakeAt({ ...base, mine: 103_000, any: 100_000 })).toBe(102_500);
    });

    it('wakes when an occurrence of any slot becomes overdue enough to be stolen', () => {
      expect(claimWakeAt({ ...base, mine: 200_000, any: 99_000 })).toBe(106_000);
      expect(claimWakeAt({ ...base, mine: null, any: 99_000 })).toBe(106_000);
    });

    it('has nothing to wake for when no scheduler has a next occurrence', () => {
      expect(claimWakeAt({ ...base, mine: null, any: null })).toBeNull();
    });

    it('looks again after a short poll when its due occurrences are all held by other workers', () => {
      expect(claimWakeAt({ ...base, mine: 99_000, any: 99_000, heldByOthers: true })).toBe(
        100_000 + HELD_POLL_MS,
      );
      // Without that, at once: a pass that found work goes on while work is due.
      expect(claimWakeAt({ ...base, mine: 99_000, any: 99_000 })).toBe(98_500);
    });
  });
});
