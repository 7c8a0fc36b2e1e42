import { describe, expect, it } from 'vitest';
import { newCorrelationId, newProcessId } from '../../src/runs/ids.js';

// Issue #24: run and process ids are UUIDv7, so the store's indexes take new ones at their end;
// and, like fencing tokens, they must tell nothing of the ids made for other tenants in between.

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const millisecondOf = (uuid: string) => Number.parseInt(uuid.replaceAll('-', '').slice(0, 12), 16);
// The 32 bits after the version (12, then 14 after the variant, then 6) that the library would
// otherwise count up within a millisecond.
const sequenceOf = (uuid: string) => {
  const hex = uuid.replaceAll('-', '');
  const high = Number.parseInt(hex.slice(13, 16), 16);
  const middle = Number.parseInt(hex.slice(16, 20), 16) & 0x3fff;
  const low = Number.parseInt(hex.slice(20, 22), 16) >> 2;
  return high * 2 ** 20 + middle * 2 ** 6 + low;
};

describe('run and process ids', () => {
  it('are a prefix and a UUIDv7 of the millisecond they were made in, in order across milliseconds', () => {
    const before = Date.now();
    const run = newCorrelationId();
    const process = newProcessId();
    const after = Date.now();
    expect(run).toMatch(/^run_/);
    expect(process).toMatch(/^proc_/);
    for (const uuid of [run.slice(4), process.slice(5)]) {
      expect(uuid).toMatch(UUID_V7);
      expect(millisecondOf(uuid)).toBeGreaterThanOrEqual(before);
      expect(millisecondOf(uuid)).toBeLessThanOrEqual(after);
    }
    const ids = Array.from({ length: 2000 }, () => newCorrelationId().slice(4));
    for (const [i, id] of ids.entries())
      if (i > 0) expect(millisecondOf(id)).toBeGreaterThanOrEqual(millisecondOf(ids[i - 1] as string));
  });

  it('draw every bit after the millisecond afresh: ids made one after another do not count up', () => {
    const ids = Array.from({ length: 5000 }, () => newCorrelationId().slice(4));
    const sameMillisecond = ids.flatMap((id, i) => {
      const previous = ids[i - 1];
      return previous !== undefined && millisecondOf(previous) === millisecondOf(id) ? [[previous, id]] : [];
    });
    expect(sameMillisecond.length).toBeGreaterThan(100);
    const counted = sameMillisecond.filter(
      ([a, b]) => sequenceOf(b as string) === sequenceOf(a as string) + 1,
    );
    expect(counted).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
