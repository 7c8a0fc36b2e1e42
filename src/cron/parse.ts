import { UrsaError } from '../errors/index.js';
import { CronExpression, type DayOfMonthRule, type DayOfWeekRule } from './expression.js';
import {
  DAY_OF_MONTH,
  DAY_OF_WEEK,
  FIELDS,
  type FieldName,
  type FieldSpec,
  HOUR,
  MACROS,
  MINUTE,
  MONTH,
  SECOND,
} from './fields.js';

const SYNTAX = 'a value, a name, *, a range a-b, a step /n after * or a value or a range, or a list of these';

function fail(field: FieldName | 'expression', value: string, reason: string, allowed?: string): never {
  throw new UrsaError('CRON_INVALID', `${field}: ${JSON.stringify(value)}: ${reason}`, {
    field,
    value,
    ...(allowed === undefined ? {} : { allowed }),
  });
}

function rangeText(spec: FieldSpec): string {
  const names = spec.names ? Object.keys(spec.names) : [];
  const first = names[0];
  const last = names[names.length - 1];
  return names.length > 0 ? `${spec.min}-${spec.max} or ${first}-${last}` : `${spec.min}-${spec.max}`;
}

const DIGITS = /^[0-9]+$/;
const NAME = /^[A-Z]{3}$/;

/**
 * Upper case for ASCII letters only. `String.prototype.toUpperCase` maps some non-ASCII letters
 * onto ASCII ones (`ſ` → `S`, `ı` → `I`), which let `ſun` or `FRı` pass as weekday names; the
 * dialect is ASCII (decisions §3), so those must stay as written and be refused (issue #12,
 * found by test/cron/properties.test.ts).
 */
function asciiUpper(text: string): string {
  return text.replace(/[a-z]+/g, (letters) => letters.toUpperCase());
}

/** Lower case for ASCII letters only: the Kelvin sign `\u212A` must not make `@wee\u212Aly` a macro. */
function asciiLower(text: string): string {
  return text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/** A single value: ASCII digits (no sign) or, where the field has them, a three-letter name. */
function parseValue(spec: FieldSpec, text: string, item: string): number {
  if (DIGITS.test(text)) {
    const value = Number(text);
    if (value < spec.min || value > spec.max) {
      fail(spec.name, item, `${text} is out of range`, rangeText(spec));
    }
    return value;
  }
  const upper = asciiUpper(text);
  if (spec.names && NAME.test(upper)) {
    const value = spec.names[upper];
    if (value !== undefined) return value;
    fail(spec.name, item, `unknown name ${JSON.stringify(text)}`, rangeText(spec));
  }
  if (text === '') fail(spec.name, item, 'a value is missing', rangeText(spec));
  fail(spec.name, item, `${JSON.stringify(text)} is not a value of this field`, rangeText(spec));
}

function parseStep(spec: FieldSpec, text: string, item: string): number {
  if (text === '') fail(spec.name, item, 'a step is required after /', 'a whole number 1 or more');
  if (!DIGITS.test(text))
    fail(
      spec.name,
      item,
      `the step ${JSON.stringify(text)} is not a whole number`,
      'a whole number 1 or more',
    );
  const step = Number(text);
  if (step < 1) fail(spec.name, item, 'the step after / must be 1 or more', 'a whole number 1 or more');
  return step;
}

/**
 * Parses one plain item (`*`, `v`, `a-b`, with an optional `/step`) into the values it allows.
 * Day-of-week numbering follows Spring: `*` is 1-7 (so `*\/k` counts from Monday) and a range
 * starting at 7 starts at Sunday (0).
 */
function parsePlainItem(spec: FieldSpec, item: string): number[] {
  const slash = item.indexOf('/');
  const rangePart = slash === -1 ? item : item.slice(0, slash);
  const step = slash === -1 ? 1 : parseStep(spec, item.slice(slash + 1), item);
  const isDayOfWeek = spec === DAY_OF_WEEK;
  let min: number;
  let max: number;
  if (rangePart === '*' || (item === '?' && (spec === DAY_OF_MONTH || isDayOfWeek))) {
    min = isDayOfWeek ? 1 : spec.min;
    max = spec.max;
  } else if (rangePart === '') {
    fail(spec.name, item, 'a start value or * is required before /', SYNTAX);
  } else {
    const dash = rangePart.indexOf('-');
    if (dash === -1) {
      min = parseValue(spec, rangePart, item);
      max = slash === -1 ? min : spec.max;
    } else {
      min = parseValue(spec, rangePart.slice(0, dash), item);
      max = parseValue(spec, rangePart.slice(dash + 1), item);
      if (isDayOfWeek && min === 7) min = 0;
      if (min > max) {
        fail(
          spec.name,
          item,
          `the range ${rangePart} goes backwards; ranges do not wrap around`,
          rangeText(spec),
        );
      }
    }
  }
  const values: number[] = [];
  for (let v = min; v <= max; v += step) values.push(v);
  return values;
}

function parseTimeField(spec: FieldSpec, text: string): boolean[] {
  const allowed = new Array<boolean>(spec.max + 1).fill(false);
  for (const item of splitList(spec, text)) {
    if (item === '?') fail(spec.name, item, '? is only allowed in day-of-month and day-of-week', SYNTAX);
    for (const v of parsePlainItem(spec, item)) allowed[v] = true;
  }
  return allowed;
}

function splitList(spec: FieldSpec, text: string): string[] {
  const items = text.split(',');
  for (const item of items) {
    if (item === '') fail(spec.name, text, 'a list has an empty item', SYNTAX);
  }
  return items;
}

const DOM_ALLOWED = `${SYNTAX}; or L, L-n (n 1-30), LW, nW (n 1-31), ?`;

function parseDaysOfMonth(text: string): DayOfMonthRule[] | null {
  const rules: DayOfMonthRule[] = [];
  let mask = 0;
  let every = false;
  for (const raw of splitList(DAY_OF_MONTH, text)) {
    const item = asciiUpper(raw);
    if (item === 'L') {
      rules.push({ kind: 'last', offset: 0 });
    } else if (item === 'LW') {
      rules.push({ kind: 'lastWeekday' });
    } else if (item.startsWith('L-')) {
      const n = item.slice(2);
      if (!DIGITS.test(n))
        fail('day-of-month', raw, 'L- must be followed by a number of days', 'L-1 to L-30');
      const offset = Number(n);
      if (offset < 1 || offset > 30)
        fail('day-of-month', raw, `the offset ${n} is out of range`, 'L-1 to L-30');
      rules.push({ kind: 'last', offset });
    } else if (item.includes('L')) {
      fail('day-of-month', raw, 'L is allowed only as L, L-n or LW', DOM_ALLOWED);
    } else if (item.endsWith('W')) {
      const n = item.slice(0, -1);
      if (n === '') fail('day-of-month', raw, 'a day is required before W', 'nW with n 1-31, or LW');
      if (!DIGITS.test(n))
        fail('day-of-month', raw, `${JSON.stringify(n)} before W is not a day`, 'nW with n 1-31, or LW');
      rules.push({ kind: 'nearestWeekday', day: parseValue(DAY_OF_MONTH, n, raw) });
    } else if (item.includes('W')) {
      fail('day-of-month', raw, 'W is allowed only as nW or LW', DOM_ALLOWED);
    } else {
      if (item === '*' || item === '?') every = true;
      // The item as written: an error's value is what the user wrote, not its upper case (issue #12).
      for (const v of parsePlainItem(DAY_OF_MONTH, raw)) mask |= 1 << v;
    }
  }
  if (every) return null;
  if (mask !== 0) rules.push({ kind: 'days', mask });
  return rules;
}

function parseWeekday(text: string, item: string): number {
  if (text === '') fail('day-of-week', item, 'a weekday is required', '0-7 or MON-SUN');
  return parseValue(DAY_OF_WEEK, text, item) % 7;
}

function parseDaysOfWeek(text: string): DayOfWeekRule[] | null {
  const rules: DayOfWeekRule[] = [];
  let mask = 0;
  let every = false;
  for (const raw of splitList(DAY_OF_WEEK, text)) {
    const item = asciiUpper(raw);
    const hash = item.indexOf('#');
    if (hash !== -1) {
      const weekday = parseWeekday(item.slice(0, hash), raw);
      const k = item.slice(hash + 1);
      if (!DIGITS.test(k) || Number(k) < 1 || Number(k) > 5) {
        fail('day-of-week', raw, 'the occurrence after # must be 1-5', 'n#k with n 0-7 or MON-SUN and k 1-5');
      }
      rules.push({ kind: 'nth', weekday, nth: Number(k) });
    } else if (item.endsWith('L')) {
      const day = item.slice(0, -1);
      if (day === '') fail('day-of-week', raw, 'a weekday is required before L', 'nL with n 0-7 or MON-SUN');
      rules.push({ kind: 'lastOfMonth', weekday: parseWeekday(day, raw) });
    } else {
      if (item === '*' || item === '?') every = true;
      // As written, like day-of-month (parseValue upper-cases names itself).
      for (const v of parsePlainItem(DAY_OF_WEEK, raw)) mask |= 1 << (v % 7);
    }
  }
  if (every || mask === 0x7f) return null;
  if (mask !== 0) rules.push({ kind: 'weekdays', mask });
  return rules;
}

// Field separators are ASCII spaces and tabs; other white space is trimmed only at the ends.
const SEPARATORS = /[ \t]+/;
const OUTER_WHITE_SPACE = /^[ \t\r\n\f\v]+|[ \t\r\n\f\v]+$/g;

/**
 * The likely intent of a five-field (Unix) expression: the same fields after a seconds field of 0,
 * which Spring/Quartz puts first (issue #23: `30 2 * * *` suggests `0 30 2 * * *`).
 */
function fiveFieldHint(parts: readonly string[]): string {
  if (parts.length !== FIELDS.length - 1) return '';
  return `; the seconds field comes first, so for a Unix cron write "0 ${parts.join(' ')}"`;
}

/**
 * Parses a Spring/Quartz cron expression (decisions §3) into an immutable {@link CronExpression}.
 *
 * Six fields: second minute hour day-of-month month day-of-week, or a macro (`@daily`, …).
 *
 * @throws UrsaError `CRON_INVALID` naming the field, the offending value and what is allowed,
 *   e.g. `day-of-week: "MON#6": the occurrence after # must be 1-5`.
 */
export function parseCron(text: unknown): CronExpression {
  if (typeof text !== 'string') {
    throw new UrsaError('CRON_INVALID', 'expression: a cron expression (a string) is required', {
      field: 'expression',
      value: text,
      allowed: 'six fields: second minute hour day-of-month month day-of-week, or a macro',
    });
  }
  const trimmed = text.replace(OUTER_WHITE_SPACE, '');
  let body = trimmed;
  if (trimmed.startsWith('@')) {
    const expansion = MACROS[asciiLower(trimmed)];
    if (expansion === undefined) {
      fail('expression', trimmed, 'unknown macro', Object.keys(MACROS).join(' '));
    }
    body = expansion;
  }
  const parts = body === '' ? [] : body.split(SEPARATORS);
  if (parts.length !== FIELDS.length) {
    fail(
      'expression',
      text,
      `expected 6 fields (second minute hour day-of-month month day-of-week), found ${parts.length}${fiveFieldHint(parts)}`,
      'six fields separated by spaces, or a macro such as @daily',
    );
  }
  const [second, minute, hour, dayOfMonth, month, dayOfWeek] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  return new CronExpression(text, parts.join(' '), {
    seconds: parseTimeField(SECOND, second),
    minutes: parseTimeField(MINUTE, minute),
    hours: parseTimeField(HOUR, hour),
    daysOfMonth: parseDaysOfMonth(dayOfMonth),
    months: parseTimeField(MONTH, month),
    daysOfWeek: parseDaysOfWeek(dayOfWeek),
  });
}

/**
 * Why a well-formed expression never fires (decisions §3: refused where a schedule is written), or
 * null when it fires. The text is the same for a scheduler document and `ursa next`.
 */
export function neverFiresReason(cron: CronExpression, expression: string): string | null {
  if (!cron.neverFires) return null;
  return `${JSON.stringify(expression)} never fires: no date matches its day-of-month, month and day-of-week fields together`;
}
