import { z } from 'zod';
import { neverFiresReason, parseCron } from '../cron/index.js';
import { isUrsaError } from '../errors/index.js';
import { parseAt } from '../time/at.js';
import { parseFixedDuration } from '../time/duration.js';
import { timeZone } from '../time/zone.js';
import { isValidName, NAME_RULE } from './name.js';

/**
 * Field schemas shared by the scheduler and recipe documents. Each checks one field on its own, so
 * a document with several bad fields reports all of them. Messages name no field: the caller's
 * issue path does.
 */

/** A string with something other than white space in it. */
export const nonBlankString = z.string().refine((value) => value.trim() !== '', 'must not be empty');

/** A document name (scheduler, recipe, workflow) under the rule of decisions §6. */
export const nameString = z.string().refine(isValidName, {
  error: (issue) => `${JSON.stringify(issue.input)} is not a valid name: a name is ${NAME_RULE}`,
});

/** `cron:` (spec §2, decisions §3): parsed, and refused when it can never fire. */
export const cronField = z.string().transform((expression, ctx) => {
  try {
    const cron = parseCron(expression);
    const never = neverFiresReason(cron, expression);
    if (never === null) return { expression, cron };
    ctx.addIssue({ code: 'custom', message: never });
  } catch (error) {
    if (!isUrsaError(error, 'CRON_INVALID')) throw error;
    ctx.addIssue({ code: 'custom', message: error.message });
  }
  return z.NEVER;
});

/**
 * `at:` (spec §10a, decisions §3): checked for its form only; the instant is resolved once the
 * zone is known.
 */
export const atField = z.string().superRefine((value, ctx) => {
  try {
    parseAt(value);
  } catch (error) {
    if (!isUrsaError(error, 'AT_INVALID')) throw error;
    const reason = error.message.replace(/^at: /, '');
    ctx.addIssue({
      code: 'custom',
      message: `${reason}; expected ${error.allowed ?? 'an ISO-8601 date-time'}`,
    });
  }
});

/**
 * `timezone:` (spec §2, §10c): an IANA id, checked with `timeZone()`. Missing, null or blank means
 * no zone (UTC for execution), as spec §10c treats an empty `timezone:` like a missing one.
 */
export const timezoneField = z
  .string()
  .nullable()
  .transform((id, ctx) => {
    if (id === null || id.trim() === '') return undefined;
    try {
      return { id, zone: timeZone(id) };
    } catch (error) {
      if (!isUrsaError(error, 'ZONE_INVALID')) throw error;
      ctx.addIssue({
        code: 'custom',
        message: `${JSON.stringify(id)} is not an IANA time zone; expected ${error.allowed ?? 'an IANA time zone id'}`,
      });
      return z.NEVER;
    }
  });

/** An ISO-8601 duration of fixed length, as milliseconds (see `parseFixedDuration`). */
export const durationField = z.string().transform((text, ctx) => {
  const result = parseFixedDuration(text);
  if ('ms' in result) return { text, ms: result.ms };
  ctx.addIssue({ code: 'custom', message: result.reason });
  return z.NEVER;
});

/** A mapping of parameters (`params:`), any values; default `{}`. */
export const paramsField = z.record(z.string(), z.unknown()).default(() => ({}));
