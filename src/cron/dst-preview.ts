import type { TimeZone } from '../time/zone.js';
import type { CronExpression } from './expression.js';
import { nextMatchingWall } from './wall-search.js';

/**
 * What a daylight-saving transition does to an expression's fire times (decisions §3):
 * - `shifted`: matching wall times fall in a spring-forward gap and fire later by the gap's length;
 * - `once`: matching wall times are repeated by a fall-back overlap and fire at their first instant only;
 * - `twice`: as `once`, but the hour field matches all 24 hours, so they fire at both instants.
 */
export type DstEffect = 'shifted' | 'once' | 'twice';

/** One transition that affects fire times. Instants are UTC epoch ms; offsets ms (local − UTC). */
export interface DstNote {
  readonly effect: DstEffect;
  /** The instant the offset changes. */
  readonly transition: number;
  readonly offsetBefore: number;
  readonly offsetAfter: number;
  /** How many matching wall times fall in the gap or overlap. */
  readonly count: number;
  /** The first few of them (wall times, ms; see `time/calendar.ts`), with the instants they fire at. */
  readonly examples: readonly { readonly wall: number; readonly fireTimes: readonly number[] }[];
}

const EXAMPLES = 3;
// A transition can hold at most an hour or two of seconds; counting stops here all the same.
const MAX_COUNT = 100_000;

function notesAt(cron: CronExpression, transition: number, before: number, after: number): DstNote | null {
  const gap = after > before;
  const wallStart = transition + Math.min(before, after);
  const wallEnd = transition + Math.max(before, after);
  const effect: DstEffect = gap ? 'shifted' : cron.everyHour ? 'twice' : 'once';
  const examples: { wall: number; fireTimes: number[] }[] = [];
  let count = 0;
  for (let w = nextMatchingWall(cron, wallStart, wallEnd); w !== null && count < MAX_COUNT; ) {
    count++;
    if (examples.length < EXAMPLES) {
      const fireTimes = gap ? [w - before] : effect === 'twice' ? [w - before, w - after] : [w - before];
      examples.push({ wall: w, fireTimes });
    }
    w = nextMatchingWall(cron, w + 1000, wallEnd);
  }
  if (count === 0) return null;
  return { effect, transition, offsetBefore: before, offsetAfter: after, count, examples };
}

/**
 * The daylight-saving transitions in `[from, until)` (UTC epoch ms) at which `cron`, read in
 * `zone`, has fire times in a gap or an overlap, so a user can be warned before saving.
 * Transitions that no matching wall time touches are left out.
 */
export function dstNotes(cron: CronExpression, zone: TimeZone, from: number, until: number): DstNote[] {
  const notes: DstNote[] = [];
  if (cron.neverFires) return notes;
  let period = zone.periodAt(from);
  while (period.end < until) {
    const next = zone.periodAt(period.end);
    const note = notesAt(cron, next.start, next.previousOffset, next.offset);
    if (note !== null) notes.push(note);
    period = next;
  }
  return notes;
}
