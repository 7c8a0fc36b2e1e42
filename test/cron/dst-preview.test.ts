import { describe, expect, it } from 'vitest';
import { dstNotes, parseCron, timeZone } from '../../src/cron/index.js';
import { formatWall } from '../../src/time/calendar.js';
import { iso } from '../support/cases.js';

const HOUR = 3_600_000;
const from = Date.parse('2026-01-01T00:00:00Z');
const until = Date.parse('2027-01-01T00:00:00Z');

function notes(expr: string, zone: string) {
  return dstNotes(parseCron(expr), timeZone(zone), from, until).map((n) => ({
    effect: n.effect,
    transition: iso(n.transition),
    offsets: [n.offsetBefore / HOUR, n.offsetAfter / HOUR],
    count: n.count,
    examples: n.examples.map((e) => [formatWall(e.wall), ...e.fireTimes.map(iso)]),
  }));
}

// issue #2: warn on save about fire times a DST transition moves or repeats (decisions §3).
describe('DST preview (decisions §3)', () => {
  it('lists the shifted gap time and the single overlap time of a daily 02:30 in Berlin', () => {
    expect(notes('0 30 2 * * *', 'Europe/Berlin')).toEqual([
      {
        effect: 'shifted',
        transition: '2026-03-29T01:00:00Z',
        offsets: [1, 2],
        count: 1,
        examples: [['2026-03-29T02:30:00', '2026-03-29T01:30:00Z']],
      },
      {
        effect: 'once',
        transition: '2026-10-25T01:00:00Z',
        offsets: [2, 1],
        count: 1,
        examples: [['2026-10-25T02:30:00', '2026-10-25T00:30:00Z']],
      },
    ]);
  });

  it('says an every-hour expression fires twice in the overlap', () => {
    const [gap, overlap] = notes('0 */20 * * * *', 'Europe/Berlin');
    expect(gap?.effect).toBe('shifted');
    expect(gap?.count).toBe(3);
    expect(overlap?.effect).toBe('twice');
    expect(overlap?.count).toBe(3);
    expect(overlap?.examples[0]).toEqual([
      '2026-10-25T02:00:00',
      '2026-10-25T00:00:00Z',
      '2026-10-25T01:00:00Z',
    ]);
  });

  it('is empty when no fire time is near a transition, or the zone has none', () => {
    expect(notes('0 0 12 * * *', 'Europe/Berlin')).toEqual([]);
    expect(notes('0 30 2 * * *', 'Asia/Tokyo')).toEqual([]);
  });
});
