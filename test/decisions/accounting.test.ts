import { describe, expect, it } from 'vitest';
import { parseCron, timeZone } from '../../src/cron/index.js';
import { accountOccurrences, occurrencesBetween } from '../../src/decisions/accounting.js';
import type { ScheduleTiming } from '../../src/decisions/advance.js';

const t = (text: string) => Date.parse(text);
const every = (expression: string, zone = 'UTC'): ScheduleTiming => ({
  trigger: { kind: 'cron', expression, cron: parseCron(expression) },
  zone: timeZone(zone),
});
const run = (scheduledFor: number, coalescedUntil: number | null = null) => ({
  scheduledFor,
  coalescedUntil,
});

describe('occurrencesBetween', () => {
  it('lists the fire times in [from, to], both ends included', () => {
    expect(
      occurrencesBetween(every('*/10 * * * * *'), t('2026-01-01T00:00:00Z'), t('2026-01-01T00:00:30Z')),
    ).toEqual([0, 10, 20, 30].map((s) => t('2026-01-01T00:00:00Z') + s * 1000));
  });

  it('gives an at: instant only when it lies in the window', () => {
    const at: ScheduleTiming = {
      trigger: { kind: 'at', at: '1970-01-01T00:00:05Z', instant: 5000 },
      zone: timeZone('UTC'),
    };
    expect(occurrencesBetween(at, 0, 10_000)).toEqual([5000]);
    expect(occurrencesBetween(at, 6000, 10_000)).toEqual([]);
  });
});

// decisions §4: every occurrence is one run, or absorbed by one coalesced run — never none, never two.
describe('accountOccurrences', () => {
  const expected = [1000, 2000, 3000, 4000, 5000, 6000];

  it('accepts runs of their own and coalesced ranges that together serve each occurrence once', () => {
    const account = accountOccurrences(expected, [
      run(1000),
      run(2000, 4000),
      run(5000),
      run(6000),
      run(7000),
    ]);
    expect(account).toEqual({ expected: 6, served: 4, absorbed: 2, missing: [], doubled: [] });
  });

  it('names the occurrences no run served', () => {
    expect(accountOccurrences(expected, [run(1000), run(2000, 3000), run(6000)]).missing).toEqual([
      4000, 5000,
    ]);
  });

  it('names an occurrence served twice: by two runs, or by a run inside a coalesced range', () => {
    const account = accountOccurrences(expected, [
      run(1000),
      run(1000),
      run(2000, 5000),
      run(4000),
      run(6000),
      run(0, 1000),
    ]);
    expect(account.doubled).toEqual([
      { at: 1000, count: 3 },
      { at: 4000, count: 2 },
    ]);
    expect(account.missing).toEqual([]);
  });

  it('counts a range that starts before the window for the occurrences inside it', () => {
    const account = accountOccurrences(expected, [run(500, 3000), run(4000, 6000)]);
    expect(account).toEqual({ expected: 6, served: 1, absorbed: 5, missing: [], doubled: [] });
  });
});
