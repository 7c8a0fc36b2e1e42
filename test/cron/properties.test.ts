import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type CronExpression,
  nextFireTime,
  parseCron,
  previousFireTime,
  type TimeZone,
  timeZone,
} from '../../src/cron/index.js';
import { UrsaError } from '../../src/errors/index.js';

// Property tests of the cron engine (issue #12) against decisions §3. Expressions are generated
// from the dialect's grammar as a small syntax tree; the tree, never Ursa's parser, gives the
// oracle its meaning. Fire times are checked against a brute-force search over wall times that is
// mapped to instants with an offset model read from `Intl` (not Ursa's Temporal-based zone code),
// applying decisions §3's gap and overlap rules.

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const iso = (ms: number) => new Date(ms).toISOString();

// ---------------------------------------------------------------------------------------------
// The grammar of decisions §3 as generators. Each generated piece carries its text and meaning.

/** Weekday of a civil date: 0 = Sunday … 6 = Saturday. */
type DayTest = (day: number, length: number, weekdayOf: (day: number) => number) => boolean;

interface TimeField {
  readonly text: string;
  readonly values: ReadonlySet<number>;
}

interface DayField {
  readonly text: string;
  readonly test: DayTest;
}

interface Expr {
  readonly text: string;
  /** The six fields as the parser should normalise them (single spaces; a macro's expansion). */
  readonly normalized: string;
  readonly seconds: ReadonlySet<number>;
  readonly minutes: ReadonlySet<number>;
  readonly hours: ReadonlySet<number>;
  readonly months: ReadonlySet<number>;
  readonly dom: DayTest;
  readonly dow: DayTest;
}

interface Spec {
  readonly min: number;
  readonly max: number;
  /** `*` and the start of `*\/n` (day-of-week counts from Monday: 1). */
  readonly starMin: number;
  readonly names?: readonly string[];
  /** Value of names[0]. */
  readonly namesFrom?: number;
  readonly dayOfWeek?: boolean;
}

const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAY_NAMES = ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'];

const SPECS = {
  second: { min: 0, max: 59, starMin: 0 },
  minute: { min: 0, max: 59, starMin: 0 },
  hour: { min: 0, max: 23, starMin: 0 },
  dom: { min: 1, max: 31, starMin: 1 },
  month: { min: 1, max: 12, starMin: 1, names: MONTH_NAMES, namesFrom: 1 },
  dow: { min: 0, max: 7, starMin: 1, names: DAY_NAMES, namesFrom: 1, dayOfWeek: true },
} satisfies Record<string, Spec>;

/** Letters in any case (decisions §3). */
const anyCase = (text: string): fc.Arbitrary<string> =>
  fc
    .array(fc.boolean(), { minLength: text.length, maxLength: text.length })
    .map((lower) => [...text].map((c, i) => (lower[i] ? c.toLowerCase() : c)).join(''));

/** The text of value `v`: digits (maybe with a leading zero) or, where the field has one, its name. */
function valueText(spec: Spec, v: number): fc.Arbitrary<string> {
  const digits = fc.constantFrom(String(v), String(v).padStart(2, '0'));
  const name = spec.names?.[v - (spec.namesFrom ?? 0)];
  return name === undefined ? digits : fc.oneof(digits, anyCase(name));
}

const value = (spec: Spec) => fc.integer({ min: spec.min, max: spec.max });

function stepped(from: number, to: number, step: number): number[] {
  const out: number[] = [];
  for (let v = from; v <= to; v += step) out.push(v);
  return out;
}

/** A plain item: `*`, `v`, `a-b`, `*\/n`, `v/n`, `a-b/n`, with the values it allows. */
function plainItem(spec: Spec): fc.Arbitrary<{ text: string; values: number[] }> {
  const step = fc.integer({ min: 1, max: spec.max - spec.min + 6 });
  // A day-of-week range starting at 7 (Sunday) starts at 0 (decisions §3); others go forwards.
  const range = fc
    .tuple(value(spec), value(spec))
    .filter(([a, b]) => a <= b || (spec.dayOfWeek === true && a === 7))
    .map(([a, b]) => ({ a, b, from: spec.dayOfWeek === true && a === 7 ? 0 : a }));
  const rangeText = (a: number, b: number) =>
    fc.tuple(valueText(spec, a), valueText(spec, b)).map(([x, y]) => `${x}-${y}`);
  return fc.oneof(
    fc.constant({ text: '*', values: stepped(spec.starMin, spec.max, 1) }),
    value(spec).chain((v) => valueText(spec, v).map((text) => ({ text, values: [v] }))),
    range.chain(({ a, b, from }) => rangeText(a, b).map((text) => ({ text, values: stepped(from, b, 1) }))),
    step.map((n) => ({ text: `*/${n}`, values: stepped(spec.starMin, spec.max, n) })),
    fc
      .tuple(value(spec), step)
      .chain(([v, n]) =>
        valueText(spec, v).map((text) => ({ text: `${text}/${n}`, values: stepped(v, spec.max, n) })),
      ),
    fc
      .tuple(range, step)
      .chain(([{ a, b, from }, n]) =>
        rangeText(a, b).map((text) => ({ text: `${text}/${n}`, values: stepped(from, b, n) })),
      ),
  );
}

function timeField(spec: Spec, maxItems = 3): fc.Arbitrary<TimeField> {
  return fc.array(plainItem(spec), { minLength: 1, maxLength: maxItems }).map((items) => ({
    text: items.map((i) => i.text).join(','),
    values: new Set(items.flatMap((i) => i.values)),
  }));
}

const isWeekday = (w: number) => w >= 1 && w <= 5;

/** The weekday (Monday-Friday) of the month nearest to day n; none when the month has no day n. */
function nearestWeekday(n: number, length: number, weekdayOf: (day: number) => number): number {
  if (n > length) return -1;
  let best = -1;
  for (let d = 1; d <= length; d++) {
    if (isWeekday(weekdayOf(d)) && (best === -1 || Math.abs(d - n) < Math.abs(best - n))) best = d;
  }
  return best;
}

const domItem: fc.Arbitrary<{ text: string; test: DayTest }> = fc.oneof(
  {
    weight: 3,
    arbitrary: plainItem(SPECS.dom).map(({ text, values }) => ({
      text,
      test: (day: number) => values.includes(day),
    })),
  },
  {
    weight: 1,
    arbitrary: anyCase('L').map((text) => ({ text, test: (d: number, len: number) => d === len })),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 1, max: 30 })
      .chain((n) =>
        anyCase('L').map((l) => ({ text: `${l}-${n}`, test: (d: number, len: number) => d === len - n })),
      ),
  },
  {
    weight: 1,
    arbitrary: anyCase('LW').map((text) => ({
      text,
      test: ((d, len, wd) => {
        let last = len;
        while (!isWeekday(wd(last))) last--;
        return d === last;
      }) satisfies DayTest,
    })),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: 31 }).chain((n) =>
      anyCase('W').map((w) => ({
        text: `${n}${w}`,
        test: ((d, len, wd) => d === nearestWeekday(n, len, wd)) satisfies DayTest,
      })),
    ),
  },
);

const weekdayText = fc
  .integer({ min: 0, max: 7 })
  .chain((v) => valueText(SPECS.dow, v).map((text) => ({ text, weekday: v % 7 })));

const dowItem: fc.Arbitrary<{ text: string; test: DayTest }> = fc.oneof(
  {
    weight: 3,
    arbitrary: plainItem(SPECS.dow).map(({ text, values }) => ({
      text,
      test: ((d, _len, wd) => values.some((v) => v % 7 === wd(d))) satisfies DayTest,
    })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(weekdayText, anyCase('L')).map(([{ text, weekday }, l]) => ({
      text: `${text}${l}`,
      test: ((d, len, wd) => wd(d) === weekday && d + 7 > len) satisfies DayTest,
    })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(weekdayText, fc.integer({ min: 1, max: 5 })).map(([{ text, weekday }, k]) => ({
      text: `${text}#${k}`,
      test: ((d, _len, wd) => wd(d) === weekday && Math.ceil(d / 7) === k) satisfies DayTest,
    })),
  },
);

const always: DayTest = () => true;

function dayField(item: fc.Arbitrary<{ text: string; test: DayTest }>): fc.Arbitrary<DayField> {
  return fc.oneof(
    fc.constantFrom({ text: '*', test: always }, { text: '?', test: always }),
    fc.array(item, { minLength: 1, maxLength: 3 }).map((items) => ({
      text: items.map((i) => i.text).join(','),
      test: ((d, len, wd) => items.some((i) => i.test(d, len, wd))) satisfies DayTest,
    })),
  );
}

/** Separators: any run of ASCII spaces and tabs; outer white space is ignored (decisions §3). */
const separator = fc.string({ unit: fc.constantFrom(' ', '\t'), minLength: 1, maxLength: 3 });
const outer = fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\r'), maxLength: 2 });

interface Fields {
  readonly second: TimeField;
  readonly minute: TimeField;
  readonly hour: TimeField;
  readonly dom: DayField;
  readonly month: TimeField;
  readonly dow: DayField;
}

function expression(fields: fc.Arbitrary<Fields>): fc.Arbitrary<Expr> {
  return fc
    .tuple(fields, fc.array(separator, { minLength: 5, maxLength: 5 }), outer, outer)
    .map(([f, seps, lead, trail]) => {
      const parts = [f.second.text, f.minute.text, f.hour.text, f.dom.text, f.month.text, f.dow.text];
      const text = lead + parts.map((p, i) => (i === 0 ? p : `${seps[i - 1]}${p}`)).join('') + trail;
      return {
        text,
        normalized: parts.join(' '),
        seconds: f.second.values,
        minutes: f.minute.values,
        hours: f.hour.values,
        months: f.month.values,
        dom: f.dom.test,
        dow: f.dow.test,
      };
    });
}

/** Every field from the whole grammar. */
const anyFields: fc.Arbitrary<Fields> = fc.record({
  second: timeField(SPECS.second),
  minute: timeField(SPECS.minute),
  hour: timeField(SPECS.hour),
  dom: dayField(domItem),
  month: timeField(SPECS.month),
  dow: dayField(dowItem),
});

/** The macros of decisions §3 with the expressions the README's table gives for them. */
const MACROS: Record<string, string> = {
  '@yearly': '0 0 0 1 1 *',
  '@annually': '0 0 0 1 1 *',
  '@monthly': '0 0 0 1 * *',
  '@weekly': '0 0 0 * * 0',
  '@daily': '0 0 0 * * *',
  '@midnight': '0 0 0 * * *',
  '@hourly': '0 0 * * * *',
};

const all = (from: number, to: number) => new Set(stepped(from, to, 1));

/** A macro in any case with surrounding white space, and its meaning spelled out by hand. */
const macro: fc.Arbitrary<Expr> = fc
  .tuple(fc.constantFrom(...Object.keys(MACROS)), outer, outer)
  .chain(([name, lead, trail]) =>
    anyCase(name).map((written): Expr => {
      const expansion = MACROS[name] as string;
      const [, , hour, dom, month, dow] = expansion.split(' ');
      return {
        text: `${lead}${written}${trail}`,
        normalized: expansion,
        seconds: new Set([0]),
        minutes: new Set([0]),
        hours: hour === '*' ? all(0, 23) : new Set([0]),
        months: month === '*' ? all(1, 12) : new Set([1]),
        dom: dom === '*' ? always : (d) => d === 1,
        dow: dow === '*' ? always : (d, _len, wd) => wd(d) === 0,
      };
    }),
  );

const validExpression = fc.oneof(
  { weight: 9, arbitrary: expression(anyFields) },
  { weight: 1, arbitrary: macro },
);

// ---------------------------------------------------------------------------------------------
// The oracle: dates that match, wall times that match, and decisions §3's mapping to instants.

function monthLength(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function dateMatches(expr: Expr, year: number, month: number, day: number): boolean {
  if (!expr.months.has(month)) return false;
  const length = monthLength(year, month);
  const weekdayOf = (d: number) => new Date(Date.UTC(year, month - 1, d)).getUTCDay();
  return expr.dom(day, length, weekdayOf) && expr.dow(day, length, weekdayOf);
}

/** Whether any date of 2000-2027 matches: every (month, leap year, weekday of the 1st) occurs there. */
function firesAtAll(expr: Expr): boolean {
  for (let year = 2000; year <= 2027; year++) {
    for (let month = 1; month <= 12; month++) {
      if (!expr.months.has(month)) continue;
      for (let day = 1; day <= monthLength(year, month); day++) {
        if (dateMatches(expr, year, month, day)) return true;
      }
    }
  }
  return false;
}

/**
 * Matching wall times (local date-times as ms, read as if UTC) in [from, to], by brute force: every
 * minute of the window is tested field by field, and each of its seconds when the minute matches.
 */
function matchingWallTimesByMinute(expr: Expr, from: number, to: number): number[] {
  const out: number[] = [];
  let dateKey = Number.NaN;
  let dateOk = false;
  for (let minute = Math.floor(from / MINUTE) * MINUTE; minute <= to; minute += MINUTE) {
    const d = new Date(minute);
    const key = Math.floor(minute / DAY);
    if (key !== dateKey) {
      dateKey = key;
      dateOk = dateMatches(expr, d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate());
    }
    if (!dateOk || !expr.hours.has(d.getUTCHours()) || !expr.minutes.has(d.getUTCMinutes())) continue;
    for (let s = 0; s < 60; s++) {
      const wall = minute + s * SECOND;
      if (expr.seconds.has(s) && wall >= from && wall <= to) out.push(wall);
    }
  }
  return out;
}

/** The same, day by day: for expressions whose time fields allow few values (cheap over a year). */
function matchingWallTimesByDay(expr: Expr, from: number, to: number): number[] {
  const out: number[] = [];
  const sorted = (s: ReadonlySet<number>) => [...s].sort((a, b) => a - b);
  for (let day = Math.floor(from / DAY) * DAY; day <= to; day += DAY) {
    const d = new Date(day);
    if (!dateMatches(expr, d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate())) continue;
    for (const h of sorted(expr.hours))
      for (const m of sorted(expr.minutes))
        for (const s of sorted(expr.seconds)) {
          const wall = day + h * HOUR + m * MINUTE + s * SECOND;
          if (wall >= from && wall <= to) out.push(wall);
        }
  }
  return out;
}

/** A zone's UTC offsets as read from `Intl`: offset changes found by scanning and bisection. */
class IntlZone {
  readonly id: string;
  /** Instants where the offset changes, with the offset from then on; sorted. */
  readonly transitions: { at: number; before: number; after: number }[] = [];
  readonly #format: Intl.DateTimeFormat;
  readonly #first: number;

  constructor(id: string, from: number, to: number) {
    this.id = id;
    this.#format = new Intl.DateTimeFormat('en-US', {
      timeZone: id,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    this.#first = this.#read(from);
    let previous = this.#first;
    for (let t = from + 6 * HOUR; t <= to; t += 6 * HOUR) {
      const offset = this.#read(t);
      if (offset !== previous) {
        let lo = t - 6 * HOUR; // offset `previous`
        let hi = t; // offset `offset`
        while (hi - lo > SECOND) {
          const mid = lo + Math.floor((hi - lo) / 2 / SECOND) * SECOND;
          if (this.#read(mid) === previous) lo = mid;
          else hi = mid;
        }
        this.transitions.push({ at: hi, before: previous, after: offset });
        previous = offset;
      }
    }
  }

  #read(t: number): number {
    const parts: Record<string, number> = {};
    for (const p of this.#format.formatToParts(new Date(t))) parts[p.type] = Number(p.value);
    const local = Date.UTC(
      parts.year as number,
      (parts.month as number) - 1,
      parts.day,
      parts.hour,
      parts.minute,
      parts.second,
    );
    return local - Math.floor(t / SECOND) * SECOND;
  }

  offsetAt(t: number): number {
    let offset = this.#first;
    for (const tr of this.transitions) {
      if (tr.at > t) break;
      offset = tr.after;
    }
    return offset;
  }
}

/**
 * decisions §3: a wall time in a gap fires with the offset before the gap; one repeated by an
 * overlap fires at its first instant, or at both when the hour field matches all 24 hours.
 */
function instantsOf(zone: IntlZone, wall: number, everyHour: boolean): number[] {
  const before = zone.offsetAt(wall - DAY);
  const after = zone.offsetAt(wall + DAY);
  const valid = [...new Set([before, after])]
    .map((o) => wall - o)
    .filter((t) => zone.offsetAt(t) === wall - t);
  if (valid.length === 0) return [wall - before];
  valid.sort((a, b) => a - b);
  return everyHour ? valid : valid.slice(0, 1);
}

/** The fire times in (from, to] the oracle expects: sorted, each instant once. */
function expectedFireTimes(
  expr: Expr,
  zone: IntlZone,
  from: number,
  to: number,
  walls: (expr: Expr, from: number, to: number) => number[],
): number[] {
  const offsets = [
    zone.offsetAt(from - DAY),
    zone.offsetAt(to + DAY),
    zone.offsetAt(from),
    zone.offsetAt(to),
  ];
  const lo = from + Math.min(...offsets) - SECOND;
  const hi = to + Math.max(...offsets) + SECOND;
  const everyHour = expr.hours.size === 24;
  const instants = walls(expr, lo, hi).flatMap((w) => instantsOf(zone, w, everyHour));
  return [...new Set(instants.filter((t) => t > from && t <= to))].sort((a, b) => a - b);
}

/** Ursa's fire times in (from, to], each checked to be strictly after the one before. */
function actualFireTimes(cron: CronExpression, zone: TimeZone, from: number, to: number): number[] {
  const out: number[] = [];
  let t = from;
  for (let i = 0; i < 50_000; i++) {
    const next = nextFireTime(cron, zone, t);
    if (next === null || next > to) return out;
    if (!(next > t)) throw new Error(`next(${iso(t)}) = ${iso(next)} is not strictly after its argument`);
    out.push(next);
    t = next;
  }
  throw new Error('more fire times than the window can hold');
}

/** The first place two lists of instants differ, with a little context, or null. */
function firstDifference(actual: readonly number[], expected: readonly number[]) {
  const n = Math.max(actual.length, expected.length);
  for (let i = 0; i < n; i++) {
    if (actual[i] !== expected[i]) {
      const show = (list: readonly number[]) => list.slice(Math.max(0, i - 2), i + 3).map(iso);
      return {
        index: i,
        actual: show(actual),
        expected: show(expected),
        counts: [actual.length, expected.length],
      };
    }
  }
  return null;
}

/** previousFireTime walks the same list backwards (checked on up to `samples` entries). */
function checkPrevious(cron: CronExpression, zone: TimeZone, from: number, times: readonly number[]): void {
  const stride = Math.max(1, Math.floor(times.length / 100));
  for (let i = 0; i < times.length; i += stride) {
    const previous = previousFireTime(cron, zone, times[i] as number);
    if (i > 0) expect(previous).toBe(times[i - 1]);
    else if (previous !== null) expect(previous).toBeLessThanOrEqual(from);
  }
}

// ---------------------------------------------------------------------------------------------

const DST_ZONES = ['America/New_York', 'Europe/London', 'Australia/Lord_Howe', 'Europe/Berlin'] as const;
const MODEL_FROM = Date.parse('2023-06-01T00:00:00Z');
const MODEL_TO = Date.parse('2028-06-01T00:00:00Z');
const models = new Map<string, IntlZone>();
const model = (id: string) => models.get(id) as IntlZone;

beforeAll(() => {
  for (const id of [...DST_ZONES, 'UTC']) models.set(id, new IntlZone(id, MODEL_FROM, MODEL_TO));
});

const FIELD_NAMES = ['second', 'minute', 'hour', 'day-of-month', 'month', 'day-of-week', 'expression'];

/**
 * parseCron's only way to refuse: UrsaError CRON_INVALID naming the field, the value as the user
 * wrote it (a piece of `text`) and what is allowed.
 */
function expectCronInvalid(error: unknown, text?: string): void {
  expect(error).toBeInstanceOf(UrsaError);
  const e = error as UrsaError;
  expect(e.code).toBe('CRON_INVALID');
  if (text !== undefined && e.field !== 'expression') expect(text).toContain(e.value);
  expect(FIELD_NAMES).toContain(e.field);
  expect(e.message.startsWith(`${e.field}: `)).toBe(true);
  expect(typeof e.allowed).toBe('string');
  expect(e.status).toBe(400);
}

/** Parses, or checks the refusal; a parsed expression must answer next and previous. */
function parseOrRefuse(text: unknown): CronExpression | undefined {
  let cron: CronExpression;
  try {
    cron = parseCron(text);
  } catch (error) {
    expectCronInvalid(error, typeof text === 'string' ? text : undefined);
    return undefined;
  }
  expect(cron.normalized.split(' ')).toHaveLength(6);
  const from = Date.parse('2026-03-29T00:30:00Z');
  const zone = timeZone('Europe/Berlin');
  const next = nextFireTime(cron, zone, from);
  const previous = previousFireTime(cron, zone, from);
  expect(next === null || (Number.isInteger(next) && next > from && next % SECOND === 0)).toBe(true);
  expect(previous === null || (Number.isInteger(previous) && previous < from)).toBe(true);
  expect(next === null).toBe(cron.neverFires);
  return cron;
}

describe('the oracle itself (decisions §3)', () => {
  it('decisions §3 oracle: reads the DST transitions the tests rely on from Intl', () => {
    const at = (id: string, instant: string) =>
      model(id).transitions.find((t) => t.at === Date.parse(instant)) ?? 'missing';
    expect(at('Europe/Berlin', '2026-03-29T01:00:00Z')).toEqual({
      at: Date.parse('2026-03-29T01:00:00Z'),
      before: HOUR,
      after: 2 * HOUR,
    });
    expect(at('Europe/London', '2026-10-25T01:00:00Z')).toMatchObject({ before: HOUR, after: 0 });
    expect(at('America/New_York', '2026-03-08T07:00:00Z')).toMatchObject({
      before: -5 * HOUR,
      after: -4 * HOUR,
    });
    // Lord Howe moves by half an hour: 02:00 LHDT (+11:00) back to 01:30 LHST (+10:30).
    expect(at('Australia/Lord_Howe', '2026-04-04T15:00:00Z')).toMatchObject({
      before: 11 * HOUR,
      after: 10.5 * HOUR,
    });
    expect(model('UTC').transitions).toEqual([]);
    for (const id of DST_ZONES) expect(model(id).transitions).toHaveLength(10);
  });

  it('decisions §3 oracle: applies the gap rule to the README example (daily 02:30 in Berlin)', () => {
    const berlin = model('Europe/Berlin');
    const daily0230: Expr = {
      text: '0 30 2 * * *',
      normalized: '0 30 2 * * *',
      seconds: new Set([0]),
      minutes: new Set([30]),
      hours: new Set([2]),
      months: all(1, 12),
      dom: always,
      dow: always,
    };
    const from = Date.parse('2026-03-27T00:00:00Z');
    expect(
      expectedFireTimes(daily0230, berlin, from, from + 3 * DAY, matchingWallTimesByDay).map(iso),
    ).toEqual(['2026-03-27T01:30:00.000Z', '2026-03-28T01:30:00.000Z', '2026-03-29T01:30:00.000Z']);
  });
});

describe('parseCron on generated and mangled input (decisions §3)', () => {
  it('decisions §3: every expression generated from the grammar parses, normalised, and "never fires" is exact', () => {
    fc.assert(
      fc.property(validExpression, (expr) => {
        const cron = parseCron(expr.text);
        expect(cron.source).toBe(expr.text);
        expect(cron.normalized).toBe(expr.normalized);
        expect(cron.neverFires).toBe(!firesAtAll(expr));
        expect(cron.everyHour).toBe(expr.hours.size === 24);
      }),
      { numRuns: 300 },
    );
  });

  // Characters of the dialect, look-alikes (non-ASCII digits, a sign, letters whose case mapping
  // lands in ASCII: ſ→S, ı→I, K→k) and white space that is not a separator.
  const CHARS = [
    ...'0123456789 \t*?/-,#@LWlw',
    ...'MONTUEWEDTHUFRISATSUNJANFEBMARAPRMAYJUNJULAUGSEPOCTNOVDEC',
    ...'+.xX\n\r\u00a0\u2003٣１ſıK\u212aİ',
  ];
  const mangled = fc.string({ unit: fc.constantFrom(...CHARS), maxLength: 40 });

  // Non-ASCII letters whose upper or lower case is an ASCII letter of a name or macro.
  const LOOKALIKES: Record<string, string> = { s: 'ſ', S: 'ſ', i: 'ı', I: 'ı', k: '\u212a', K: '\u212a' };

  /**
   * A valid expression with one edit: a character deleted, inserted or replaced, a letter replaced
   * by a look-alike, or two fields swapped.
   */
  const mutated = fc
    .tuple(
      validExpression,
      fc.nat(),
      fc.constantFrom(...CHARS),
      fc.constantFrom('delete', 'insert', 'replace', 'lookalike', 'swap'),
    )
    .map(([expr, n, c, edit]) => {
      const t = expr.text;
      const i = t.length === 0 ? 0 : n % t.length;
      if (edit === 'lookalike') {
        const at = [...t].flatMap((ch, index) => (ch in LOOKALIKES ? [index] : []));
        const j = at[n % Math.max(1, at.length)];
        return j === undefined ? t : t.slice(0, j) + LOOKALIKES[t[j] as string] + t.slice(j + 1);
      }
      if (edit === 'delete') return t.slice(0, i) + t.slice(i + 1);
      if (edit === 'insert') return t.slice(0, i) + c + t.slice(i);
      if (edit === 'replace') return t.slice(0, i) + c + t.slice(i + 1);
      const parts = expr.normalized.split(' ');
      const j = n % parts.length;
      const k = (n >> 3) % parts.length;
      [parts[j], parts[k]] = [parts[k] as string, parts[j] as string];
      return parts.join(' ');
    });

  it('decisions §3: mangled and random text either parses or is refused with CRON_INVALID naming the field', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          mangled,
          mutated,
          fc.string({ maxLength: 30 }),
          fc.string({ unit: 'binary', maxLength: 30 }),
        ),
        (text) => {
          parseOrRefuse(text);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('decisions §3: anything that is not a string is refused with CRON_INVALID on the expression', () => {
    fc.assert(
      fc.property(
        fc.anything().filter((v) => typeof v !== 'string'),
        (v) => {
          let error: unknown;
          try {
            parseCron(v);
          } catch (e) {
            error = e;
          }
          expectCronInvalid(error);
          expect((error as UrsaError).field).toBe('expression');
        },
      ),
      { numRuns: 100 },
    );
  });

  it('decisions §3: ASCII only — text with any character outside the dialect, once trimmed, is refused', () => {
    const DIALECT = /^[0-9A-Za-z*?/,#@ \t-]*$/;
    fc.assert(
      fc.property(fc.oneof(mangled, mutated), (text) => {
        const trimmed = text.replace(/^[ \t\r\n\f\v]+|[ \t\r\n\f\v]+$/g, '');
        fc.pre(!DIALECT.test(trimmed));
        expect(() => parseCron(text)).toThrow(UrsaError);
      }),
      { numRuns: 300 },
    );
  });
});

describe('fire times against a brute-force search (decisions §3)', () => {
  /** Time fields from the whole grammar; day fields usually every day, so the DST day is in play. */
  const timeOfDayFields: fc.Arbitrary<Fields> = fc.record({
    second: timeField(SPECS.second),
    minute: timeField(SPECS.minute),
    hour: fc.oneof(
      timeField(SPECS.hour),
      fc.constantFrom('*', '0-23', '*/1', '0-11,12-23').map((text) => ({ text, values: all(0, 23) })),
    ),
    dom: fc.oneof(
      { weight: 4, arbitrary: fc.constant({ text: '*', test: always }) },
      { weight: 1, arbitrary: dayField(domItem) },
    ),
    month: fc.oneof(
      { weight: 4, arbitrary: fc.constant({ text: '*', values: all(1, 12) }) },
      { weight: 1, arbitrary: timeField(SPECS.month) },
    ),
    dow: fc.oneof(
      { weight: 4, arbitrary: fc.constant({ text: '?', test: always }) },
      { weight: 1, arbitrary: dayField(dowItem) },
    ),
  });

  it('decisions §3: next fire times around every DST transition of 2023-2028 match the brute force minute by minute, strictly increasing', () => {
    const window = fc.record({
      zone: fc.constantFrom(...DST_ZONES),
      transition: fc.nat({ max: 9 }),
      start: fc.integer({ min: -4 * HOUR, max: HOUR }),
    });
    fc.assert(
      fc.property(expression(timeOfDayFields), window, (expr, { zone: id, transition, start }) => {
        const zoneModel = model(id);
        const from = (zoneModel.transitions[transition]?.at as number) + start;
        const to = from + 5 * HOUR;
        const cron = parseCron(expr.text);
        const zone = timeZone(id);
        const actual = actualFireTimes(cron, zone, from, to);
        const expected = expectedFireTimes(expr, zoneModel, from, to, matchingWallTimesByMinute);
        expect(firstDifference(actual, expected)).toBeNull();
        checkPrevious(cron, zone, from, actual);
      }),
      { numRuns: 200 },
    );
  });

  /** Day fields from the whole grammar; a few times of day, often in the small hours DST moves. */
  const few = (spec: Spec, values: fc.Arbitrary<number>) =>
    fc
      .uniqueArray(values, { minLength: 1, maxLength: 2 })
      .chain((vs) =>
        fc
          .tuple(...vs.map((v) => valueText(spec, v)))
          .map((texts) => ({ text: texts.join(','), values: new Set(vs) })),
      );
  const dateFields: fc.Arbitrary<Fields> = fc.record({
    second: few(SPECS.second, fc.integer({ min: 0, max: 59 })),
    minute: few(SPECS.minute, fc.constantFrom(0, 15, 29, 30, 45, 59)),
    hour: fc.oneof(
      few(SPECS.hour, fc.oneof(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 23 }))),
      fc.constant({ text: '*', values: all(0, 23) }),
    ),
    dom: dayField(domItem),
    month: timeField(SPECS.month),
    dow: dayField(dowItem),
  });

  it('decisions §3: a year of fire times in DST zones and UTC matches the brute force day by day (L, W, #, names, steps)', () => {
    fc.assert(
      fc.property(
        expression(dateFields),
        fc.constantFrom(...DST_ZONES, 'UTC'),
        fc.integer({ min: Date.parse('2024-01-01T00:00:00Z'), max: Date.parse('2026-06-01T00:00:00Z') }),
        (expr, id, from) => {
          const to = from + 366 * DAY;
          const cron = parseCron(expr.text);
          const zone = timeZone(id);
          const actual = actualFireTimes(cron, zone, from, to);
          const expected = expectedFireTimes(expr, model(id), from, to, matchingWallTimesByDay);
          expect(firstDifference(actual, expected)).toBeNull();
          checkPrevious(cron, zone, from, actual);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('the search is bounded by the structure of the expression (decisions §3)', () => {
  /** A zone that counts the offset periods the search visits (one lookup per period). */
  function counting(zone: TimeZone): { zone: TimeZone; visits: () => number } {
    let visits = 0;
    const wrapper = {
      id: zone.id,
      periodAt: (t: number) => {
        visits++;
        return zone.periodAt(t);
      },
      offsetAt: (t: number) => zone.offsetAt(t),
    };
    return { zone: wrapper as unknown as TimeZone, visits: () => visits };
  }

  it('decisions §3: next visits no offset period for a never-firing expression, and at most one per DST change up to its answer', () => {
    fc.assert(
      fc.property(
        validExpression,
        fc.constantFrom(...DST_ZONES, 'UTC'),
        fc.integer({ min: Date.parse('1990-01-01T00:00:00Z'), max: Date.parse('2090-01-01T00:00:00Z') }),
        (expr, id, from) => {
          const cron = parseCron(expr.text);
          const { zone, visits } = counting(timeZone(id));
          const next = nextFireTime(cron, zone, from);
          if (cron.neverFires) {
            expect(next).toBeNull();
            expect(visits()).toBe(0);
            return;
          }
          // Something matches in every 28-year cycle of the calendar, and every wall time has an instant.
          expect(next).not.toBeNull();
          const years = new Date(next as number).getUTCFullYear() - new Date(from).getUTCFullYear();
          expect(years).toBeLessThanOrEqual(28);
          expect(visits()).toBeLessThanOrEqual(1 + 2 * (years + 1));
        },
      ),
      { numRuns: 300 },
    );
  });

  it.each([
    ['0 0 0 29 2 MON', '2024-03-01T00:00:00Z', '2044-02-29T00:00:00Z'],
    ['59 59 23 31 12 SAT', '2024-01-01T00:00:00Z', '2033-12-31T23:59:59Z'],
    ['0 0 0 L-30 * 2#5', '2024-01-01T00:00:00Z', null],
    ['0 0 0 29 2 5#5', '2024-01-01T00:00:00Z', '2036-02-29T00:00:00Z'],
  ])('decisions §3: the pathological %s after %s answers %s at once', (text, from, expected) => {
    const cron = parseCron(text);
    const next = nextFireTime(cron, timeZone('UTC'), Date.parse(from));
    expect(next === null ? null : iso(next).replace('.000', '')).toBe(expected);
  });
});

describe('regressions found by these properties (issue #12)', () => {
  // Counterexample: "0/1 0-0 0-0 1W JAN/1 FRı/1,*/1" parsed, as "FRı".toUpperCase() is "FRI".
  it.each([
    ['0 0 0 * * FRı/1', 'day-of-week', 'FRı/1'],
    ['0 0 0 * * ſun', 'day-of-week', 'ſun'],
    ['0 0 0 ? * ſunL', 'day-of-week', 'ſunL'],
    ['0 0 0 ? * ſun#1', 'day-of-week', 'ſun#1'],
    ['0 0 0 ? * MON-frı', 'day-of-week', 'MON-frı'],
    ['0 0 0 1 ſep *', 'month', 'ſep'],
    ['@wee\u212aly', 'expression', '@wee\u212aly'],
  ])(
    'decisions §3: %s is refused — a non-ASCII letter whose case mapping is ASCII is not a name',
    (text, field, value) => {
      let error: unknown;
      try {
        parseCron(text);
      } catch (e) {
        error = e;
      }
      expectCronInvalid(error);
      expect((error as UrsaError).field).toBe(field);
      expect((error as UrsaError).value).toBe(value);
    },
  );

  it('decisions §3: an error names the value as written, not its upper case', () => {
    let error: unknown;
    try {
      parseCron('0 0 0 * * mon-xyz');
    } catch (e) {
      error = e;
    }
    expect((error as UrsaError).value).toBe('mon-xyz');
    expect((error as UrsaError).message).toBe('day-of-week: "mon-xyz": unknown name "xyz"');
  });

  it('decisions §3: the ASCII names still parse in any case', () => {
    expect(parseCron('0 0 0 1 sep SUN').normalized).toBe('0 0 0 1 sep SUN');
    expect(parseCron('@WEEKLY').normalized).toBe('0 0 0 * * 0');
  });
});
