import { describe, expect, it } from 'vitest';
import { nextFireTime, parseCron, previousFireTime, timeZone } from '../../src/cron/index.js';
import { UrsaError } from '../../src/errors/index.js';
import { fires, previous, thrown } from '../support/cron.js';

// The dialect of decisions §3, one feature at a time; instants checked against a calendar by hand.

describe('host zone isolation (decisions §3)', () => {
  it('runs this suite in a host zone far from UTC, so a leak of the process zone would show', () => {
    expect(Intl.DateTimeFormat().resolvedOptions().timeZone).toBe('Australia/Sydney');
    expect(new Date(0).getTimezoneOffset()).toBe(-600);
  });
});

describe('macros (decisions §3)', () => {
  it.each([
    ['@yearly', '0 0 0 1 1 *'],
    ['@annually', '0 0 0 1 1 *'],
    ['@monthly', '0 0 0 1 * *'],
    ['@weekly', '0 0 0 * * 0'],
    ['@daily', '0 0 0 * * *'],
    ['@midnight', '0 0 0 * * *'],
    ['@hourly', '0 0 * * * *'],
  ])('%s fires like %s', (macro, expansion) => {
    expect(fires(macro, '2024-02-27T13:14:15Z')).toEqual(fires(expansion, '2024-02-27T13:14:15Z'));
    expect(parseCron(macro).normalized).toBe(expansion);
  });

  it('accepts any case and surrounding white space', () => {
    expect(fires(' \t@DAILY\n', '2024-01-01T05:00:00Z', 1)).toEqual(['2024-01-02T00:00:00Z']);
    expect(fires('@Weekly', '2024-01-01T00:00:00Z', 1)).toEqual(['2024-01-07T00:00:00Z']);
  });

  it('refuses an unknown macro', () => {
    const error = thrown(() => parseCron('@every 5m')) as UrsaError;
    expect(error.code).toBe('CRON_INVALID');
    expect(error.message).toBe('expression: "@every 5m": unknown macro');
  });
});

describe('fields, names, ranges, lists and steps (decisions §3)', () => {
  it('separates fields by any run of spaces and tabs', () => {
    expect(fires('0\t0  12 \t * * *', '2024-01-01T00:00:00Z', 1)).toEqual(['2024-01-01T12:00:00Z']);
  });

  it('reads month and weekday names in any case', () => {
    expect(fires('0 0 0 1 jan-Mar *', '2024-02-15T00:00:00Z', 3)).toEqual([
      '2024-03-01T00:00:00Z',
      '2025-01-01T00:00:00Z',
      '2025-02-01T00:00:00Z',
    ]);
    expect(fires('0 0 9 * * mon-FRI', '2024-01-05T10:00:00Z', 2)).toEqual([
      '2024-01-08T09:00:00Z',
      '2024-01-09T09:00:00Z',
    ]);
  });

  it('treats day-of-week 0 and 7 as Sunday and 1 as Monday', () => {
    const sunday = ['2024-01-07T00:00:00Z'];
    expect(fires('0 0 0 * * 0', '2024-01-01T00:00:00Z', 1)).toEqual(sunday);
    expect(fires('0 0 0 * * 7', '2024-01-01T00:00:00Z', 1)).toEqual(sunday);
    expect(fires('0 0 0 * * 1', '2024-01-02T00:00:00Z', 1)).toEqual(['2024-01-08T00:00:00Z']);
  });

  it('starts a day-of-week range 7-n at Sunday (SUN-SAT is every day)', () => {
    // 2024-01-06 is a Saturday.
    expect(fires('0 0 0 * * 7-2', '2024-01-06T00:00:00Z', 3)).toEqual([
      '2024-01-07T00:00:00Z',
      '2024-01-08T00:00:00Z',
      '2024-01-09T00:00:00Z',
    ]);
    expect(fires('0 0 0 * * SUN-SAT', '2024-01-06T00:00:00Z', 2)).toEqual([
      '2024-01-07T00:00:00Z',
      '2024-01-08T00:00:00Z',
    ]);
  });

  it('counts */k in day-of-week from Monday', () => {
    // 2024-01-01 is a Monday: Mon, Wed, Fri, Sun, Mon.
    expect(fires('0 0 0 * * */2', '2023-12-31T12:00:00Z')).toEqual([
      '2024-01-01T00:00:00Z',
      '2024-01-03T00:00:00Z',
      '2024-01-05T00:00:00Z',
      '2024-01-07T00:00:00Z',
      '2024-01-08T00:00:00Z',
    ]);
  });

  it('runs a step from a single value to the end of the field, and allows a step larger than the range', () => {
    expect(fires('50/5 * * * * *', '2024-01-01T00:00:00Z', 3)).toEqual([
      '2024-01-01T00:00:50Z',
      '2024-01-01T00:00:55Z',
      '2024-01-01T00:01:50Z',
    ]);
    expect(fires('0/120 * * * * *', '2024-01-01T00:00:00Z', 2)).toEqual([
      '2024-01-01T00:01:00Z',
      '2024-01-01T00:02:00Z',
    ]);
    expect(fires('0 0 1-10/4 * * *', '2024-01-01T00:00:00Z', 3)).toEqual([
      '2024-01-01T01:00:00Z',
      '2024-01-01T05:00:00Z',
      '2024-01-01T09:00:00Z',
    ]);
  });

  it('combines list items of every kind', () => {
    expect(fires('0 0 0 1,15,L * *', '2024-02-01T00:00:00Z', 3)).toEqual([
      '2024-02-15T00:00:00Z',
      '2024-02-29T00:00:00Z',
      '2024-03-01T00:00:00Z',
    ]);
  });

  it('accepts ? in either day field, meaning *', () => {
    expect(fires('0 0 0 ? * ?', '2024-01-01T00:00:00Z', 1)).toEqual(['2024-01-02T00:00:00Z']);
  });
});

describe('Quartz day rules (decisions §3)', () => {
  it('L is the last day of the month, leap years included', () => {
    expect(fires('0 0 0 L 2 *', '2023-01-01T00:00:00Z', 2)).toEqual([
      '2023-02-28T00:00:00Z',
      '2024-02-29T00:00:00Z',
    ]);
  });

  it('L-n counts back from the last day and matches nothing in a month it falls before the 1st of', () => {
    expect(fires('0 0 0 L-3 * *', '2024-02-01T00:00:00Z', 2)).toEqual([
      '2024-02-26T00:00:00Z',
      '2024-03-28T00:00:00Z',
    ]);
    // L-30 is the 1st of 31-day months only.
    expect(fires('0 0 0 L-30 * *', '2024-01-01T00:00:00Z', 3)).toEqual([
      '2024-03-01T00:00:00Z',
      '2024-05-01T00:00:00Z',
      '2024-07-01T00:00:00Z',
    ]);
  });

  it('LW is the last weekday of the month', () => {
    // 2024-03-31 is a Sunday, 2024-08-31 a Saturday: both move back to Friday.
    expect(fires('0 0 0 LW 3,8 *', '2024-01-01T00:00:00Z', 2)).toEqual([
      '2024-03-29T00:00:00Z',
      '2024-08-30T00:00:00Z',
    ]);
  });

  it('nW is the nearest weekday inside the month (Quartz), and no match where day n does not exist', () => {
    expect(fires('0 0 0 1W * *', '2021-12-31T00:00:00Z', 1)).toEqual(['2022-01-03T00:00:00Z']); // Sat 1st → Mon 3rd
    expect(fires('0 0 0 15W 6 *', '2024-01-01T00:00:00Z', 1)).toEqual(['2024-06-14T00:00:00Z']); // Sat → Fri
    expect(fires('0 0 0 15W 9 *', '2024-01-01T00:00:00Z', 1)).toEqual(['2024-09-16T00:00:00Z']); // Sun → Mon
    expect(fires('0 0 0 30W 6 *', '2024-01-01T00:00:00Z', 1)).toEqual(['2024-06-28T00:00:00Z']); // Sun 30th, last day → Fri
    expect(fires('0 0 0 31W 4,5 *', '2024-01-01T00:00:00Z', 1)).toEqual(['2024-05-31T00:00:00Z']); // April has no 31st
  });

  it('nL is the last such weekday of the month', () => {
    expect(fires('0 0 0 * * 5L', '2024-05-01T00:00:00Z', 2)).toEqual([
      '2024-05-31T00:00:00Z',
      '2024-06-28T00:00:00Z',
    ]);
    expect(fires('0 0 0 ? * SUNL', '2024-05-01T00:00:00Z', 1)).toEqual(['2024-05-26T00:00:00Z']);
  });

  it('n#k is the k-th such weekday, and a month without it has no match', () => {
    expect(fires('0 0 0 ? * MON#1', '2024-01-01T00:00:00Z', 2)).toEqual([
      '2024-02-05T00:00:00Z',
      '2024-03-04T00:00:00Z',
    ]);
    // Fifth Tuesdays of 2024: Jan 30, Apr 30, Jul 30.
    expect(fires('0 0 0 ? * 2#5', '2024-01-01T00:00:00Z', 3)).toEqual([
      '2024-01-30T00:00:00Z',
      '2024-04-30T00:00:00Z',
      '2024-07-30T00:00:00Z',
    ]);
  });

  it('requires day-of-month AND day-of-week to match', () => {
    expect(fires('0 0 0 13 * FRI', '2024-01-01T00:00:00Z', 3)).toEqual([
      '2024-09-13T00:00:00Z',
      '2024-12-13T00:00:00Z',
      '2025-06-13T00:00:00Z',
    ]);
  });
});

describe('expressions that never fire (decisions §3)', () => {
  it.each(['0 0 0 30 2 *', '0 0 0 31 4,6,9,11 *', '0 0 0 L-30 2 *', '0 0 0 30W 2 *', '0 0 0 1-7 * MON#2'])(
    '%s has no fire time, known from the parse alone',
    (expr) => {
      const cron = parseCron(expr);
      expect(cron.neverFires).toBe(true);
      expect(nextFireTime(cron, timeZone('UTC'), Date.parse('2024-01-01T00:00:00Z'))).toBeNull();
      expect(previousFireTime(cron, timeZone('UTC'), Date.parse('2024-01-01T00:00:00Z'))).toBeNull();
    },
  );

  it('a rare but possible date is not mistaken for never', () => {
    expect(parseCron('0 0 0 29 2 MON').neverFires).toBe(false);
    expect(fires('0 0 0 29 2 MON', '2024-03-01T00:00:00Z', 1)).toEqual(['2044-02-29T00:00:00Z']);
  });
});

describe('next and previous (decisions §3)', () => {
  it('next is strictly after its argument, also when that is a fire time', () => {
    expect(fires('0 0 * * * *', '2024-01-01T10:00:00Z', 1)).toEqual(['2024-01-01T11:00:00Z']);
    expect(fires('0 0 * * * *', '2024-01-01T09:59:59.999Z', 1)).toEqual(['2024-01-01T10:00:00Z']);
  });

  it('previous is strictly before its argument', () => {
    expect(previous('0 0 * * * *', '2024-01-01T10:00:00Z')).toBe('2024-01-01T09:00:00Z');
    expect(previous('0 0 * * * *', '2024-01-01T10:00:00.001Z')).toBe('2024-01-01T10:00:00Z');
    expect(previous('0 0 0 L * *', '2024-03-15T00:00:00Z')).toBe('2024-02-29T00:00:00Z');
  });

  it('previous finds a shifted gap time and both overlap instants like next does', () => {
    // Europe/Berlin springs forward 2026-03-29 02:00 → 03:00 and falls back 2026-10-25 03:00 → 02:00.
    expect(previous('0 30 2 * * *', '2026-03-29T02:00:00Z', 'Europe/Berlin')).toBe('2026-03-29T01:30:00Z');
    expect(previous('0 30 * * * *', '2026-10-25T02:00:00Z', 'Europe/Berlin')).toBe('2026-10-25T01:30:00Z');
    expect(previous('0 30 2 * * *', '2026-10-25T02:00:00Z', 'Europe/Berlin')).toBe('2026-10-25T00:30:00Z');
  });
});

describe('daylight saving (decisions §3)', () => {
  it('a daily time in the spring-forward gap fires shifted by the gap, never skipped', () => {
    expect(fires('0 30 2 * * *', '2026-03-28T12:00:00Z', 2, 'Europe/Berlin')).toEqual([
      '2026-03-29T01:30:00Z', // 03:30 CEST
      '2026-03-30T00:30:00Z',
    ]);
  });

  it('a daily time in the fall-back overlap fires once, at its first instant', () => {
    expect(fires('0 30 2 * * *', '2026-10-24T12:00:00Z', 2, 'Europe/Berlin')).toEqual([
      '2026-10-25T00:30:00Z', // 02:30 CEST
      '2026-10-26T01:30:00Z',
    ]);
  });

  it('an hour field matching all 24 hours fires at both instants of the overlap', () => {
    for (const hours of ['*', '0-23', '*/1']) {
      expect(fires(`0 30 ${hours} * * *`, '2026-10-24T23:45:00Z', 3, 'Europe/Berlin')).toEqual([
        '2026-10-25T00:30:00Z', // 02:30 CEST
        '2026-10-25T01:30:00Z', // 02:30 CET
        '2026-10-25T02:30:00Z', // 03:30 CET
      ]);
    }
  });

  it('two wall times that map to one instant fire once', () => {
    // 02:00 and 02:30 do not exist on 2026-03-29 and shift onto 03:00 and 03:30, which also match.
    expect(fires('0 0,30 2,3 * * *', '2026-03-28T23:00:00Z', 4, 'Europe/Berlin')).toEqual([
      '2026-03-29T01:00:00Z',
      '2026-03-29T01:30:00Z',
      '2026-03-30T00:00:00Z',
      '2026-03-30T00:30:00Z',
    ]);
  });

  it('reads the expression in the zone, whatever the host zone is', () => {
    expect(fires('0 0 9 * * *', '2024-07-01T00:00:00Z', 1, 'America/New_York')).toEqual([
      '2024-07-01T13:00:00Z',
    ]);
    expect(fires('0 0 9 * * *', '2024-07-01T00:00:00Z', 1, 'Asia/Kolkata')).toEqual(['2024-07-01T03:30:00Z']);
  });
});

describe('validation errors (decisions §3)', () => {
  it.each([
    ['0 0 9 * * MON#6', 'day-of-week', 'MON#6', 'day-of-week: "MON#6": the occurrence after # must be 1-5'],
    ['60 * * * * *', 'second', '60', 'second: "60": 60 is out of range'],
    [
      '0 59-0 * * * *',
      'minute',
      '59-0',
      'minute: "59-0": the range 59-0 goes backwards; ranges do not wrap around',
    ],
    ['0 0 */0 * * *', 'hour', '*/0', 'hour: "*/0": the step after / must be 1 or more'],
    ['0 0 0 1L * *', 'day-of-month', '1L', 'day-of-month: "1L": L is allowed only as L, L-n or LW'],
    ['0 0 0 32W * *', 'day-of-month', '32W', 'day-of-month: "32W": 32 is out of range'],
    ['* * * * JANUARY *', 'month', 'JANUARY', 'month: "JANUARY": "JANUARY" is not a value of this field'],
    ['* * * * * 1,,2', 'day-of-week', '1,,2', 'day-of-week: "1,,2": a list has an empty item'],
    ['+5 * * * * *', 'second', '+5', 'second: "+5": "+5" is not a value of this field'],
    ['0 0 0 * * ?/2', 'day-of-week', '?/2', 'day-of-week: "?/2": "?" is not a value of this field'],
    ['0 0 ? * * *', 'hour', '?', 'hour: "?": ? is only allowed in day-of-month and day-of-week'],
    [
      '* * * * *',
      'expression',
      '* * * * *',
      'expression: "* * * * *": expected 6 fields (second minute hour day-of-month month day-of-week), found 5; the seconds field comes first, so for a Unix cron write "0 * * * * *"',
    ],
  ])('%s names %s, the value and the reason', (expr, field, value, message) => {
    const error = thrown(() => parseCron(expr)) as UrsaError;
    expect(error).toBeInstanceOf(UrsaError);
    expect(error.code).toBe('CRON_INVALID');
    expect(error.field).toBe(field);
    expect(error.value).toBe(value);
    expect(error.message).toBe(message);
    expect(error.allowed).toBeTypeOf('string');
  });

  it('refuses a non-string with a typed error', () => {
    const error = thrown(() => parseCron(42)) as UrsaError;
    expect(error.code).toBe('CRON_INVALID');
    expect(error.field).toBe('expression');
  });
});

describe('parsed expression value', () => {
  it('is immutable and keeps the text as written', () => {
    const cron = parseCron(' 0  0 9 * * MON-FRI ');
    expect(Object.isFrozen(cron)).toBe(true);
    expect(cron.source).toBe(' 0  0 9 * * MON-FRI ');
    expect(cron.normalized).toBe('0 0 9 * * MON-FRI');
  });
});

describe('time zones', () => {
  it('accepts an IANA id in any case and canonicalises it', () => {
    expect(timeZone('europe/berlin').id).toBe('Europe/Berlin');
    expect(timeZone('UTC').id).toBe('UTC');
  });

  it.each(['Mars/Olympus', '+02:00', '', 'Europe/Berlin '])('refuses %j with ZONE_INVALID', (id) => {
    const error = thrown(() => timeZone(id)) as UrsaError;
    expect(error.code).toBe('ZONE_INVALID');
    expect(error.field).toBe('timezone');
    expect(error.value).toBe(id);
  });
});
