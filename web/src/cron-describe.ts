import { DAY_OF_WEEK, MONTH } from '../../src/cron/fields.js';

/**
 * A short description in words of a Spring six-field cron expression that already parsed
 * (`parseCron` decides validity; this only reads): "at 08:00, Monday to Friday",
 * "every 10 seconds", "at 02:30 on the last Friday of the month". Unusual combinations fall back
 * to a field-by-field reading, never to a wrong sentence.
 */

const MACROS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 0 1 1 *',
  '@annually': '0 0 0 1 1 *',
  '@monthly': '0 0 0 1 * *',
  '@weekly': '0 0 0 * * 0',
  '@daily': '0 0 0 * * *',
  '@midnight': '0 0 0 * * *',
  '@hourly': '0 0 * * * *',
};

// Spring: 0 and 7 are Sunday, MON=1 … SUN=7.
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const MONTHS = [
  '',
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const NTH = ['', 'first', 'second', 'third', 'fourth', 'fifth'];

const NUM = /^\d+$/;
const STEP = /^(\*|\d+)\/(\d+)$/;

function pad(n: number | string): string {
  return String(n).padStart(2, '0');
}

function ordinal(n: number): string {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  return `${n}${['th', 'st', 'nd', 'rd'][n % 10] ?? 'th'}`;
}

function joinWords(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

function plural(n: number, unit: string): string {
  return n === 1 ? unit : `${n} ${unit}s`;
}

/** A field in general terms: "every 5 minutes from 10", "hours 9-17", "seconds 0, 30". */
function fieldPhrase(value: string, unit: string, name: (v: string) => string = (v) => v): string {
  if (value === '*' || value === '?') return `every ${unit}`;
  const step = STEP.exec(value);
  if (step !== null) {
    const every = `every ${plural(Number(step[2]), unit)}`;
    return step[1] === '*' || step[1] === '0' ? every : `${every} from ${unit} ${step[1]}`;
  }
  const rangeStep = /^([^-/]+)-([^/]+)\/(\d+)$/.exec(value);
  if (rangeStep !== null) {
    return `every ${plural(Number(rangeStep[3]), unit)} from ${name(rangeStep[1] as string)} to ${name(rangeStep[2] as string)}`;
  }
  const parts = value.split(',').map((part) => {
    const range = /^([^-]+)-(.+)$/.exec(part);
    return range === null ? name(part) : `${name(range[1] as string)} to ${name(range[2] as string)}`;
  });
  return parts.length === 1 && !value.includes('-') ? `${unit} ${parts[0]}` : `${unit}s ${joinWords(parts)}`;
}

function describeTime(second: string, minute: string, hour: string): { text: string; repeating: boolean } {
  const sec = NUM.test(second) ? Number(second) : undefined;
  const secondSuffix = sec === undefined || sec === 0 ? '' : `:${pad(sec)}`;
  if (sec !== undefined && NUM.test(minute)) {
    const hours = hour.split(',');
    if (hours.every((h) => NUM.test(h))) {
      return {
        text: `at ${joinWords(hours.map((h) => `${pad(h)}:${pad(minute)}${secondSuffix}`))}`,
        repeating: false,
      };
    }
    if (hour === '*') {
      return {
        text:
          Number(minute) === 0 && sec === 0
            ? 'every hour, on the hour'
            : `every hour at minute ${minute}${secondSuffix === '' ? '' : `, second ${sec}`}`,
        repeating: true,
      };
    }
    const hourStep = STEP.exec(hour);
    if (hourStep !== null && (hourStep[1] === '*' || hourStep[1] === '0')) {
      const at =
        Number(minute) === 0 && sec === 0
          ? ', on the hour'
          : ` at minute ${minute}${secondSuffix === '' ? '' : `, second ${sec}`}`;
      return { text: `every ${plural(Number(hourStep[2]), 'hour')}${at}`, repeating: true };
    }
    return {
      text: `at minute ${minute}${secondSuffix === '' ? '' : `, second ${sec}`} of ${fieldPhrase(hour, 'hour')}`,
      repeating: true,
    };
  }
  const minuteStep = STEP.exec(minute);
  if (sec === 0 && minuteStep !== null && (minuteStep[1] === '*' || minuteStep[1] === '0')) {
    const every = `every ${plural(Number(minuteStep[2]), 'minute')}`;
    return { text: hour === '*' ? every : `${every}, ${fieldPhrase(hour, 'hour')}`, repeating: true };
  }
  if (sec === 0 && minute === '*') {
    return {
      text: hour === '*' ? 'every minute' : `every minute, ${fieldPhrase(hour, 'hour')}`,
      repeating: true,
    };
  }
  const secondStep = STEP.exec(second);
  if (
    secondStep !== null &&
    (secondStep[1] === '*' || secondStep[1] === '0') &&
    minute === '*' &&
    hour === '*'
  ) {
    return { text: `every ${plural(Number(secondStep[2]), 'second')}`, repeating: true };
  }
  if (second === '*' && minute === '*' && hour === '*') return { text: 'every second', repeating: true };
  return {
    text: [fieldPhrase(second, 'second'), fieldPhrase(minute, 'minute'), fieldPhrase(hour, 'hour')].join(
      ', ',
    ),
    repeating: true,
  };
}

function weekdayName(token: string): string {
  const upper = token.toUpperCase();
  const n = NUM.test(upper) ? Number(upper) : DAY_OF_WEEK.names?.[upper];
  return n === undefined ? token : (WEEKDAYS[n] ?? token);
}

function monthName(token: string): string {
  const upper = token.toUpperCase();
  const n = NUM.test(upper) ? Number(upper) : MONTH.names?.[upper];
  return n === undefined ? token : (MONTHS[n] ?? token);
}

function describeDayOfWeek(value: string): string | undefined {
  if (value === '*' || value === '?') return undefined;
  const nth = /^([^#]+)#(\d)$/.exec(value);
  if (nth !== null) return `on the ${NTH[Number(nth[2])]} ${weekdayName(nth[1] as string)} of the month`;
  const last = /^(.+)L$/.exec(value);
  if (last !== null) return `on the last ${weekdayName(last[1] as string)} of the month`;
  if (STEP.test(value)) return `on ${fieldPhrase(value, 'day')} of the week (counted from Monday)`;
  const parts = value.split(',').map((part) => {
    const range = /^([^-]+)-(.+)$/.exec(part);
    return range === null
      ? `${weekdayName(part)}`
      : `${weekdayName(range[1] as string)} to ${weekdayName(range[2] as string)}`;
  });
  return parts.length === 1 && value.includes('-') ? (parts[0] as string) : `on ${joinWords(parts)}`;
}

function describeDayOfMonth(value: string): string | undefined {
  if (value === '*' || value === '?') return undefined;
  if (value === 'L') return 'on the last day of the month';
  if (value === 'LW') return 'on the last weekday of the month';
  const lastMinus = /^L-(\d+)$/.exec(value);
  if (lastMinus !== null) return `${plural(Number(lastMinus[1]), 'day')} before the last day of the month`;
  const nearest = /^(\d+)W$/.exec(value);
  if (nearest !== null) return `on the weekday nearest the ${ordinal(Number(nearest[1]))}`;
  if (STEP.test(value) || /\//.test(value)) return `on ${fieldPhrase(value, 'day')} of the month`;
  const parts = value.split(',').map((part) => {
    const range = /^(\d+)-(\d+)$/.exec(part);
    return range === null
      ? ordinal(Number(part))
      : `${ordinal(Number(range[1]))} to ${ordinal(Number(range[2]))}`;
  });
  return `on the ${joinWords(parts)}`;
}

function describeMonth(value: string): string | undefined {
  if (value === '*' || value === '?') return undefined;
  if (/\//.test(value)) return `in ${fieldPhrase(value, 'month', monthName)}`;
  const parts = value.split(',').map((part) => {
    const range = /^([^-]+)-(.+)$/.exec(part);
    return range === null
      ? monthName(part)
      : `${monthName(range[1] as string)} to ${monthName(range[2] as string)}`;
  });
  return `in ${joinWords(parts)}`;
}

/** Words for a cron expression that parsed; the expression itself when it has no six fields. */
export function describeCron(expression: string): string {
  const trimmed = expression.trim();
  const body = trimmed.startsWith('@') ? (MACROS[trimmed.toLowerCase()] ?? trimmed) : trimmed;
  const fields = body.split(/[ \t]+/);
  if (fields.length !== 6) return trimmed;
  const [second, minute, hour, dayOfMonth, month, dayOfWeek] = fields as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const time = describeTime(second, minute, hour);
  const dom = describeDayOfMonth(dayOfMonth);
  const dow = describeDayOfWeek(dayOfWeek);
  let days: string | undefined;
  if (dom !== undefined && dow !== undefined) days = `${dom}, if that is also ${dow.replace(/^on /, '')}`;
  else days = dom ?? dow ?? (time.repeating ? undefined : 'every day');
  const months = describeMonth(month);
  return [time.text, days, months].filter((part): part is string => part !== undefined).join(', ');
}
