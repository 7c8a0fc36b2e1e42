/**
 * The one catalogue of Ursa's error codes. Every {@link UrsaError} carries one of these codes;
 * `docs/errors.md` documents each and a test keeps the two in sync.
 *
 * - `status`: the HTTP status a REST response uses for the error.
 * - `doc`: one line for the reference documentation.
 *
 * Codes are stable: clients match on them, so a code is never renamed or reused.
 */
export const errorCatalogue = {
  CRON_INVALID: {
    status: 400,
    doc: 'A cron expression does not follow the dialect of decisions §3; the error names the field, the value and what is allowed.',
  },
  ZONE_INVALID: {
    status: 400,
    doc: 'A time zone is not an IANA time zone identifier known to this runtime.',
  },
  AT_INVALID: {
    status: 400,
    doc: 'An `at:` value is not an ISO-8601 date-time (local, with an offset, or with `Z`).',
  },
  INSTANT_INVALID: {
    status: 400,
    doc: 'An instant (a `from` or `before` argument) is not an ISO-8601 date-time with an offset or `Z`.',
  },
  ARGUMENT_INVALID: {
    status: 400,
    doc: 'A command-line or API argument is missing or outside its allowed range.',
  },
} as const;

/** A stable error code from {@link errorCatalogue}. */
export type ErrorCode = keyof typeof errorCatalogue;
