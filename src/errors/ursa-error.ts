import { type ErrorCode, errorCatalogue } from './catalogue.js';

/** What an {@link UrsaError} says about the input that caused it. */
export interface UrsaErrorDetails {
  /** Path of the offending field, e.g. `day-of-week` or `spec.cron`. */
  readonly field?: string;
  /** The offending value, as the user wrote it. */
  readonly value?: unknown;
  /** What would have been accepted, e.g. `0-59`. */
  readonly allowed?: string;
}

/**
 * Ursa's typed error: a stable {@link ErrorCode}, a message written for the person who made the
 * input, and the field path and value it is about. Library and driver errors are translated into
 * this type at the boundary where they occur, so callers never see a bare exception.
 */
export class UrsaError extends Error {
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly value: unknown;
  readonly allowed: string | undefined;

  constructor(code: ErrorCode, message: string, details: UrsaErrorDetails = {}) {
    super(message);
    this.name = 'UrsaError';
    this.code = code;
    this.field = details.field;
    this.value = details.value;
    this.allowed = details.allowed;
  }

  /** HTTP status for this error's code. */
  get status(): number {
    return errorCatalogue[this.code].status;
  }

  /** A plain object for JSON output: `{code, field?, message}`. */
  toJSON(): { code: ErrorCode; field?: string; message: string } {
    return this.field === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, field: this.field, message: this.message };
  }
}

/** True when `error` is an {@link UrsaError}, optionally with the given code. */
export function isUrsaError(error: unknown, code?: ErrorCode): error is UrsaError {
  return error instanceof UrsaError && (code === undefined || error.code === code);
}
