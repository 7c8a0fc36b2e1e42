import {
  type ErrorCode,
  type ErrorKind,
  errorCatalogue,
  type InfrastructureCode,
  type RefusalCode,
} from './catalogue.js';

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
 * The key {@link InfrastructureError} passes to {@link UrsaError}'s constructor to raise a code of
 * kind `infrastructure`. Not exported: nothing else can make an infrastructure error that is not an
 * {@link InfrastructureError}, so the two kinds are told apart by their class, not by convention.
 */
const FAULT: unique symbol = Symbol('ursa.infrastructure');

/**
 * Ursa's typed error: a stable {@link ErrorCode}, a message written for the person who made the
 * input, and the field path and value it is about. Library and driver errors are translated into
 * this type at the boundary where they occur, so callers never see a bare exception.
 *
 * Constructed directly it is a refusal (a {@link RefusalCode}: kind `input` or `state`); a fault of
 * the store or of Ursa itself is its subclass {@link InfrastructureError}, so a catch site can test
 * `instanceof InfrastructureError` (or {@link isRefusal}) and never take one for the other.
 */
export class UrsaError extends Error {
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly value: unknown;
  readonly allowed: string | undefined;
  /** Every reason a document was refused (document errors only), in document-field order. */
  readonly issues: readonly ValidationIssue[] | undefined;

  constructor(code: RefusalCode, message: string, details?: UrsaErrorDetails);
  /** Only for {@link InfrastructureError}: `fault` is a key no other module holds. */
  constructor(code: InfrastructureCode, message: string, details: UrsaErrorDetails, fault: typeof FAULT);
  constructor(code: ErrorCode, message: string, details: UrsaErrorDetails = {}, fault?: typeof FAULT) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    if (errorCatalogue[code].kind === 'infrastructure' && fault !== FAULT)
      throw new TypeError(`${code} is an infrastructure code: raise it as an InfrastructureError`);
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

/** What an {@link InfrastructureError} says: where (`field`, `value`) and the error it translates. */
export interface InfrastructureDetails {
  /** What failed, e.g. `db` (the store) or `url` (the Ursa server). */
  readonly field?: string;
  /** Which one, e.g. the store's file or its URL without the password. */
  readonly value?: unknown;
  /**
   * The driver, library or operating-system error this one stands for: kept for the server log
   * only. Its text never goes into the message, which reaches REST callers and agents.
   */
  readonly cause?: unknown;
}

/**
 * A fault of the store or of Ursa itself (kind `infrastructure`: `STORE_UNAVAILABLE`, `STORE_BUSY`,
 * `STORE_FULL`, `STORE_LOCKED`, `INTERNAL`): it says nothing about the input, and the same request
 * may succeed later. Raised where a driver error is caught (`store/errors.ts`, `store/open.ts`),
 * with the driver's error as `cause`.
 */
export class InfrastructureError extends UrsaError {
  constructor(code: InfrastructureCode, message: string, details: InfrastructureDetails = {}) {
    super(code, message, details, FAULT);
    this.name = 'InfrastructureError';
  }
}

/**
 * The error a stable `code` stands for, of the class its kind calls for: for an error that crossed
 * a process boundary as its code (a REST problem answer, `client/http.ts`), not for raising one's
 * own — write `new UrsaError` or `new InfrastructureError` there.
 */
export function errorOfCode(code: ErrorCode, message: string, details: UrsaErrorDetails = {}): UrsaError {
  if (errorCatalogue[code].kind !== 'infrastructure')
    return new UrsaError(code as RefusalCode, message, details);
  const { issues: _issues, allowed: _allowed, ...where } = details;
  return new InfrastructureError(code as InfrastructureCode, message, where);
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
  return error instanceof UrsaError && !(error instanceof InfrastructureError);
}
