import { describe, expect, it } from 'vitest';
import { decideOverlap } from '../../src/decisions/overlap.js';

// spec §5, row by row, and spec §10a for one-shots.
describe('decideOverlap (spec §5)', () => {
  it.each([
    ['skip', false, false, 'start'],
    ['skip', true, false, 'skip'],
    ['skip', false, true, 'skip'],
    ['queue', false, false, 'start'],
    ['queue', true, false, 'queue'],
    ['queue', true, true, 'consolidate'],
    ['queue', false, true, 'consolidate'],
    ['cancelPrevious', false, false, 'start'],
    ['cancelPrevious', true, false, 'cancel'],
    ['cancelPrevious', true, true, 'consolidate'],
  ] as const)('policy %s, active %s, waiting %s → %s', (policy, active, waiting, expected) => {
    expect(decideOverlap({ policy, oneShot: false, active, waiting })).toBe(expected);
  });

  it('ignores the policy of a one-shot (spec §10a)', () => {
    expect(decideOverlap({ policy: 'skip', oneShot: true, active: true, waiting: false })).toBe('start');
  });
});
