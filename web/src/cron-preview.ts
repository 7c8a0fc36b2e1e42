import {
  type DstNote,
  dstNotes,
  nextFireTimes,
  parseCron,
  type TimeZone,
  timeZone,
} from '../../src/cron/index.js';
import { type JitterIdentity, jitterOffset, upcomingFires } from '../../src/decisions/jitter.js';
import type { SchedulerDefinition } from '../../src/scheduler/definition.js';
import { formatWall, MS_PER_DAY, MS_PER_HOUR } from '../../src/time/calendar.js';
import { humanDuration } from '../../src/time/duration.js';
import { formatOffset, formatZoned } from '../../src/time/instant.js';
import { describeCron } from './cron-describe.js';

/**
 * The cron helper's numbers, computed in the browser with Ursa's own cron engine (src/cron,
 * bundled): the next fire times in the scheduler's zone and the viewer's, and a note for every
 * daylight-saving transition of the next 12 months that moves, merges or repeats a fire time.
 */

export interface PreviewTime {
  readonly instant: number;
  /** `Mon 2026-06-01 08:00:00 +02:00` in the scheduler's zone. */
  readonly inZone: string;
  /** The same instant in the viewer's zone. */
  readonly inViewer: string;
  /** Set when a DST transition touches this fire time (see {@link dstNotes}). */
  readonly dst: string | undefined;
}

export interface Preview {
  readonly kind: 'cron' | 'at';
  readonly description: string;
  readonly zone: string;
  readonly viewerZone: string;
  readonly times: readonly PreviewTime[];
  readonly notes: readonly string[];
  /** What the bounds and the jitter do to the times, in words; empty without them. */
  readonly limits: readonly string[];
}

export const YEAR_MS = 365 * MS_PER_DAY;

/** The project whose schedulers fire in every project of the tenant (the store's `TENANT_PROJECT`, not bundled). */
const TENANT_PROJECT = '_tenant';

/** The viewer's IANA zone (the browser's), UTC when the browser names none Ursa knows. */
export function viewerZone(): TimeZone {
  try {
    return timeZone(Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC');
  } catch {
    return timeZone('UTC');
  }
}

function wallText(wall: number): string {
  return formatWall(wall).replace('T', ' ');
}

/** A note in words for one transition (decisions §3's rule, as `ursa next --dst` applies it). */
export function noteText(note: DstNote, zone: TimeZone): string {
  const delta = note.offsetAfter - note.offsetBefore;
  const day = formatWall(note.transition + note.offsetBefore).slice(0, 10);
  const clock = `${formatOffset(note.offsetBefore)} → ${formatOffset(note.offsetAfter)}`;
  const one = note.count === 1;
  const n = one ? '1 fire time' : `${note.count} fire times`;
  const fire = one ? 'fires' : 'fire';
  const example = note.examples[0];
  if (note.effect === 'shifted') {
    const eg =
      example === undefined
        ? ''
        : ` (e.g. ${wallText(example.wall).slice(11)} fires at ${formatZoned(example.fireTimes[0] as number, zone).slice(15)})`;
    return `${day} ${zone.id}: clocks go forward ${humanDuration(delta)} (${clock}); ${n} in the gap ${fire} ${humanDuration(delta)} later${eg}.`;
  }
  const eg = example === undefined ? '' : ` (e.g. ${wallText(example.wall).slice(11)})`;
  if (note.effect === 'once') {
    return `${day} ${zone.id}: clocks go back ${humanDuration(delta)} (${clock}); ${n} in the repeated hour ${fire} once, at the first instant${eg}.`;
  }
  return `${day} ${zone.id}: clocks go back ${humanDuration(delta)} (${clock}); the hour field matches every hour, so ${n} in the repeated hour ${fire} at both instants${eg}.`;
}

/** True when `instant` is a fire time that `note`'s gap or overlap moved, merged or repeated. */
export function touches(note: DstNote, instant: number): boolean {
  const span = Math.abs(note.offsetAfter - note.offsetBefore);
  return instant >= note.transition - span && instant < note.transition + span;
}

/**
 * What the bounds and the jitter of `definition` do, in words: when it starts and ends, how many
 * runs it makes, how long after its occurrence each run starts (the offset of `identity`).
 */
function limitsOf(definition: SchedulerDefinition, identity: JitterIdentity): string[] {
  const { bounds, jitterMs, zone } = definition;
  const limits: string[] = [];
  if (bounds.startAt !== undefined) limits.push(`No run before ${formatZoned(bounds.startAt, zone)}.`);
  if (bounds.endAt !== undefined) limits.push(`No run after ${formatZoned(bounds.endAt, zone)}.`);
  if (bounds.maxRuns !== undefined) {
    limits.push(`At most ${bounds.maxRuns} run${bounds.maxRuns === 1 ? '' : 's'} in all, then it stops.`);
  }
  if (jitterMs !== undefined && identity.project === TENANT_PROJECT) {
    limits.push(
      `Each run starts up to ${definition.jitter} after its occurrence, a different share in each project; the times above are the occurrences.`,
    );
  } else if (jitterMs !== undefined) {
    const offset = humanDuration(jitterOffset(identity, jitterMs));
    limits.push(
      `Each run starts ${offset} after its occurrence (this scheduler's share of its jitter, ${definition.jitter}); the times above include it.`,
    );
  }
  return limits;
}

/**
 * The cron helper for a valid scheduler definition, as of `now` (UTC epoch ms): its next `count`
 * fires within its `startAt`/`endAt`, delayed by the jitter offset of `identity` (where it is
 * saved: tenant, project, name), as `ursa next --scheduler` shows them.
 */
export function previewOf(
  definition: SchedulerDefinition,
  identity: JitterIdentity,
  now: number,
  viewer: TimeZone,
  count = 5,
): Preview {
  const zone = definition.zone;
  const show = (instant: number, dst: string | undefined): PreviewTime => ({
    instant,
    inZone: formatZoned(instant, zone),
    inViewer: formatZoned(instant, viewer),
    dst,
  });
  if (definition.trigger.kind === 'at') {
    const instant = definition.trigger.instant;
    return {
      kind: 'at',
      description: `once, at ${definition.trigger.at}${instant <= now ? ' (already due: fires as soon as it is saved)' : ''}`,
      zone: zone.id,
      viewerZone: viewer.id,
      times: [show(instant, undefined)],
      notes: [],
      limits: [],
    };
  }
  const cron = definition.trigger.cron;
  const notes = dstNotes(cron, zone, now, now + YEAR_MS);
  // A _tenant scheduler's runs start in each project with that project's offset: show occurrences.
  const shared = identity.project === TENANT_PROJECT;
  const timing = shared ? { ...definition, jitterMs: undefined } : definition;
  const times = upcomingFires(timing, identity, now, count).map(({ occurrence, firesAt }) => {
    const note = notes.find((n) => touches(n, occurrence));
    return show(
      firesAt,
      note === undefined
        ? undefined
        : note.effect === 'shifted'
          ? 'shifted by a DST gap'
          : note.effect === 'once'
            ? 'DST overlap: fires once'
            : 'DST overlap: fires twice',
    );
  });
  return {
    kind: 'cron',
    description: describeCron(definition.trigger.expression),
    zone: zone.id,
    viewerZone: viewer.id,
    times,
    notes: notes.map((n) => noteText(n, zone)),
    limits: limitsOf(definition, identity),
  };
}

/** One fire of the 24-hour timeline. */
export interface TimelineFire {
  readonly scheduler: string;
  readonly instant: number;
  readonly dst: boolean;
}

/** Per scheduler: its fires in `[now, now + 24 h)`, at most `cap` of them, and how many in all. */
export interface TimelineRow {
  readonly scheduler: string;
  readonly fires: readonly TimelineFire[];
  readonly total: number;
  readonly description: string;
}

export const DAY_MS = 24 * MS_PER_HOUR;

/** The timeline rows of a project's schedulers (cron or at, enabled ones) for the next 24 hours. */
export function timelineOf(
  schedulers: readonly {
    name: string;
    cron: string | null;
    at: string | null;
    timezone: string;
    enabled: boolean;
    nextRunAt: string | null;
  }[],
  now: number,
  cap = 200,
): TimelineRow[] {
  const rows: TimelineRow[] = [];
  for (const s of schedulers) {
    if (!s.enabled) continue;
    if (s.cron !== null) {
      try {
        const cron = parseCron(s.cron);
        const zone = timeZone(s.timezone);
        const notes = dstNotes(cron, zone, now, now + DAY_MS);
        const fires: TimelineFire[] = [];
        let total = 0;
        let t: number | null = now;
        for (;;) {
          t = nextFireTimes(cron, zone, t, 1)[0] ?? null;
          if (t === null || t >= now + DAY_MS) break;
          total++;
          if (fires.length < cap)
            fires.push({ scheduler: s.name, instant: t, dst: notes.some((n) => touches(n, t as number)) });
          if (total > 100_000) break;
        }
        rows.push({ scheduler: s.name, fires, total, description: describeCron(s.cron) });
      } catch {
        // A scheduler the server listed parses; one that does not is left off the picture.
      }
    } else if (s.nextRunAt !== null) {
      const instant = Date.parse(s.nextRunAt);
      const fires =
        instant >= now && instant < now + DAY_MS ? [{ scheduler: s.name, instant, dst: false }] : [];
      rows.push({ scheduler: s.name, fires, total: fires.length, description: `once, at ${s.at ?? ''}` });
    }
  }
  return rows;
}
