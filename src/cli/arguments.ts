import { UrsaError } from '../errors/index.js';

/** The most a count argument may ask for. */
const MAX_COUNT = 1000;

/**
 * A count argument (`-n`, a batch line's `count`): a whole number 1-1000, given as the command
 * line's string or as a JSON number.
 *
 * @throws UrsaError `ARGUMENT_INVALID` (input) naming `field`, the value and what is allowed.
 */
export function parseCount(value: unknown, field: string): number {
  const n = typeof value === 'string' && /^[0-9]+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_COUNT) {
    throw new UrsaError(
      'ARGUMENT_INVALID',
      `${field}: ${JSON.stringify(value)} is not a count of 1-${MAX_COUNT}`,
      { field, value, allowed: `a whole number 1-${MAX_COUNT}` },
    );
  }
  return n;
}

/**
 * A number of seconds argument (`--wait`): a whole number from 0 to `max`, given as the command
 * line's string.
 *
 * @throws UrsaError `ARGUMENT_INVALID` (input) naming `field`, the value and what is allowed.
 */
export function parseSeconds(value: string, field: string, max: number): number {
  const n = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n > max) {
    throw new UrsaError(
      'ARGUMENT_INVALID',
      `${field}: ${JSON.stringify(value)} is not a number of seconds 0-${max}`,
      {
        field,
        value,
        allowed: `a whole number of seconds, 0-${max}`,
      },
    );
  }
  return n;
}
