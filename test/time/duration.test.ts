import { describe, expect, it } from 'vitest';
import { formatDuration, humanDuration, parseFixedDuration } from '../../src/time/duration.js';

// decisions §4: catchUpWindow is an ISO-8601 duration; only fixed lengths make sense relative to nothing.
describe('fixed-length ISO-8601 durations (decisions §4)', () => {
  it.each([
    ['PT30S', 30_000],
    ['PT10M', 600_000],
    ['PT1H30M', 5_400_000],
    ['P1D', 86_400_000],
    ['P2W1D', 1_296_000_000],
    ['pt10m', 600_000],
    ['PT0.0015S', 2],
  ])('reads %s as %d ms', (text, ms) => {
    expect(parseFixedDuration(text)).toEqual({ ms });
  });

  it.each([
    ['', '"" is not an ISO-8601 duration (e.g. PT30S, PT10M, PT1H30M, P1D)'],
    ['10 minutes', '"10 minutes" is not an ISO-8601 duration (e.g. PT30S, PT10M, PT1H30M, P1D)'],
    [
      'P1Y2D',
      '"P1Y2D" has years or months, which have no fixed length; use weeks, days, hours, minutes or seconds (e.g. P30D)',
    ],
    ['PT0M', '"PT0M" must be longer than zero'],
    ['-P1D', '"-P1D" is negative'],
  ])('refuses %j', (text, reason) => {
    expect(parseFixedDuration(text)).toEqual({ reason });
  });

  it.each([
    [0, 'PT0S'],
    [20, 'PT0.02S'],
    [90_000, 'PT1M30S'],
    [86_400_000, 'P1D'],
    [90_061_001, 'P1DT1H1M1.001S'],
    [3_652 * 86_400_000, 'P3652D'],
  ])('formats %d ms as %s, which reads back as the same ms (issue #19)', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(parseFixedDuration(text, { allowZero: true })).toEqual({ ms });
  });
});

// issue #23: "ran 1 minutes late", "ran 482079 minutes late" read as people say them.
describe('humanDuration', () => {
  it.each([
    [999, 'less than a second'],
    [1000, '1 second'],
    [60_000, '1 minute'],
    [61_000, '1 minute 1 second'],
    [2_700_000, '45 minutes'],
    [5_400_000, '1 hour 30 minutes'],
    [3_600_000 + 59_000, '1 hour'],
    [90_061_000, '1 day 1 hour'],
    [482_079 * 60_000, '334 days 18 hours'],
    [-7_200_000, '2 hours'],
  ])('says %d ms as %s: the largest two units, pluralised', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });

  it('writes short units for tables', () => {
    expect(humanDuration(482_079 * 60_000, { short: true })).toBe('334 d 18 h');
    expect(humanDuration(185_000, { short: true })).toBe('3 min 5 s');
    expect(humanDuration(7_200_000, { short: true })).toBe('2 h');
    expect(humanDuration(400, { short: true })).toBe('0 s');
  });
});
