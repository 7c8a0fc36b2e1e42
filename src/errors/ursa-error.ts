import { type ErrorCode, type ErrorKind, errorCatalogue } from './catalogue.js';

/**
 * One reason a document was refused: the field path (`cron`, `params.model`, `tags[1]`, `` for the
 * whole document) and why, in words for the person who wrote it.
 */
export interface ValidationIssue {
  readonly path: string;
  readonly message: string;
}

/** What an {@link UrsaError} says about the input that caused it. */
export interface UrsaErrorDetails {
  /** Path of the offending field, e.g. `day-of-week` or `spec.cron`. */
  readonly field?: string;
  /** The offending value, as the user wrote it. */
  readonly value?: unknown;
  /** What would have been accepted, e.g. `0-59`. */
  readonly allowed?: string;
  /** Every reason a document was refused, when the error is about a whole document. */
  readonly issues?: readonly ValidationIssue[];
  /** The library or driver error this one translates, for the server log only (never shown to a user). */
  readonly cause?: unknown;
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
  /** Every reason a document was refused (document errors only), in document-field order. */
  readonly issues: readonly ValidationIssue[] | undefined;

  constructor(code: ErrorCode, message: string, details: UrsaErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'UrsaError';
    this.code = code;
    this.field = details.field;
    this.value = details.value;
    this.allowed = details.allowed;
    this.issues = details.issues;
  }

  /** HTTP status for this error's code. */
  get status(): number {
    return errorCatalogue[this.code].status;
  }

  /** What this error's code is about: input, state or infrastructure (see {@link ErrorKind}). */
  get kind(): ErrorKind {
    return errorCatalogue[this.code].kind;
  }

  /** A plain object for JSON output: `{code, field?, message, issues?}` (`issues` only when set). */
  toJSON(): { code: ErrorCode; field?: string; message: string; issues?: readonly ValidationIssue[] } {
    const base =
      this.field === undefined
        ? { code: this.code, message: this.message }
        : { code: this.code, field: this.field, message: this.message };
    return this.issues === undefined ? base : { ...base, issues: this.issues };
  }
}

/** True when `error` is an {@link UrsaError}, optionally with the given code. */
export function isUrsaError(error: unknown, code?: ErrorCode): error is UrsaError {
  return error instanceof UrsaError && (code === undefined || error.code === code);
}

/**
 * True when `error` is Ursa's refusal of an input or of the state it met (an {@link UrsaError} of
 * kind `input` or `state`), the errors a catch site that reports "this document is invalid" or
 * "this cannot start" may report. An infrastructure error (the store unreachable or busy, a
 * failure inside Ursa) is never one: it says nothing about the input, and such a site rethrows it.
 */
export function isRefusal(error: unknown): error is UrsaError {
  return error instanceof UrsaError && error.kind !== 'infrastructure';
}
