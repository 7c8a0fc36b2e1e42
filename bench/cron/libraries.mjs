import { readFileSync } from 'node:fs';
import { CronExpressionParser } from 'cron-parser';
import { Cron } from 'croner';
import { nextFireTime, parseCron, timeZone } from '../../dist/cron/index.js';

/**
 * One adapter per library, each calling the library the way its documentation shows:
 *
 * - `prepare(entry)` parses the expression for the entry's zone and start (throws when the
 *   library cannot read it) and returns a handle; parsing is never timed.
 * - `makeSweep(handles)` returns a function that asks each handle once for the next fire time
 *   after its start. Each library gets its own loop, so every call site sees one library only.
 * - `sequence(handle, count)` lists up to `count` successive fire times (epoch ms) for the
 *   comparison with Ursa; it stops where the library says there is none (null, or a throw).
 */

function versionOf(packageJsonUrl) {
  return JSON.parse(readFileSync(packageJsonUrl, 'utf8')).version;
}

// A module-level sink keeps the results alive, so no call can be optimised away.
export let sink;

export const ursa = {
  name: 'ursa',
  version: `${versionOf(new URL('../../package.json', import.meta.url))} (working tree)`,
  notes: [],
  prepare(entry) {
    return { cron: parseCron(entry.expr), zone: timeZone(entry.zone), from: entry.fromMs };
  },
  makeSweep(handles) {
    return () => {
      for (let i = 0; i < handles.length; i++) {
        const h = handles[i];
        sink = nextFireTime(h.cron, h.zone, h.from);
      }
    };
  },
  sequence(handle, count) {
    const times = [];
    let t = handle.from;
    while (times.length < count) {
      t = nextFireTime(handle.cron, handle.zone, t);
      if (t === null) break;
      times.push(t);
    }
    return times;
  },
};

// Ursa's dialect (Spring) as far as croner has options for it: day-of-month AND day-of-week
// must both match, a step may follow a single value (`5/15`), and lists or ranges of hours count
// as fixed times across DST (`no-wildcard`, the closer of its two rules to Ursa's). Weekdays keep
// 0/7 = Sunday, as in Spring, so Quartz numbering (`alternativeWeekdays`) stays off.
const CRONER_OPTIONS = { paused: true, domAndDow: true, sloppyRanges: true, fixedTimeRule: 'no-wildcard' };

export const croner = {
  name: 'croner',
  version: versionOf(new URL('../node_modules/croner/package.json', import.meta.url)),
  notes: [
    `croner: new Cron(expr, ${JSON.stringify({ timezone: 'zone', ...CRONER_OPTIONS })}); one call = nextRun(start)`,
  ],
  prepare(entry) {
    return {
      job: new Cron(entry.expr, { timezone: entry.zone, ...CRONER_OPTIONS }),
      from: new Date(entry.fromMs),
    };
  },
  makeSweep(handles) {
    return () => {
      for (let i = 0; i < handles.length; i++) {
        const h = handles[i];
        sink = h.job.nextRun(h.from);
      }
    };
  },
  sequence(handle, count) {
    const times = [];
    let t = handle.from;
    try {
      while (times.length < count) {
        t = handle.job.nextRun(t);
        if (t === null) break;
        times.push(t.getTime());
      }
    } catch {
      // A throw ends the list, as null does.
    }
    return times;
  },
};

export const cronParser = {
  name: 'cron-parser',
  version: versionOf(new URL('../node_modules/cron-parser/package.json', import.meta.url)),
  notes: [
    'cron-parser: binds its start at parse time, so one call = reset(start) + next() on the parsed ' +
      'expression; reset() turns the Date into its own (luxon) date, a cost included in its rate',
    'cron-parser: ends a schedule by throwing (taken as "no next time"), and reads day-of-month and ' +
      'day-of-week with OR (standard cron, no option for AND as in Spring), so such entries differ',
  ],
  prepare(entry) {
    const from = new Date(entry.fromMs);
    return { expr: CronExpressionParser.parse(entry.expr, { currentDate: from, tz: entry.zone }), from };
  },
  makeSweep(handles) {
    return () => {
      for (let i = 0; i < handles.length; i++) {
        const h = handles[i];
        try {
          h.expr.reset(h.from);
          sink = h.expr.next();
        } catch (error) {
          sink = error;
        }
      }
    };
  },
  sequence(handle, count) {
    const times = [];
    handle.expr.reset(handle.from);
    try {
      while (times.length < count) times.push(handle.expr.next().getTime());
    } catch {
      // Its way of saying there is no next time.
    }
    return times;
  },
};

/** Ursa first: it is the reference the others are compared with. */
export const libraries = [ursa, croner, cronParser];
