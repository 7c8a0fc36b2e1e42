/**
 * What an error is about: `input` (what the caller or a document said is not allowed), `state` (the
 * input is fine but the store's state refuses it: missing, locked, a version moved on, not
 * permitted), `infrastructure` (the store or Ursa itself failed, or the store is not this
 * process's to serve; the same request may succeed later, and nothing about the input is known).
 */
export type ErrorKind = 'input' | 'state' | 'infrastructure';

/**
 * The one catalogue of Ursa's error codes. Every {@link UrsaError} carries one of these codes;
 * `docs/errors.md` documents each and a test keeps the two in sync.
 *
 * - `status`: the HTTP status a REST response uses for the error.
 * - `kind`: what the error is about (see {@link ErrorKind}); a catch site that means "this input is
 *   refused" must never take an `infrastructure` error for one.
 * - `doc`: one line for the reference documentation.
 *
 * Codes are stable: clients match on them, so a code is never renamed or reused.
 */
export const errorCatalogue = {
  CRON_INVALID: {
    status: 400,
    kind: 'input',
    doc: 'A cron expression does not follow the cron dialect (six fields from seconds to day-of-week, or a macro such as @daily); the error names the field, the value and what is allowed.',
  },
  ZONE_INVALID: {
    status: 400,
    kind: 'input',
    doc: 'A time zone is not an IANA time zone identifier known to this runtime.',
  },
  AT_INVALID: {
    status: 400,
    kind: 'input',
    doc: 'An `at:` value is not an ISO-8601 date-time (local, with an offset, or with `Z`).',
  },
  INSTANT_INVALID: {
    status: 400,
    kind: 'input',
    doc: 'An instant (a `from` or `before` argument) is not an ISO-8601 date-time with an offset or `Z`.',
  },
  ARGUMENT_INVALID: {
    status: 400,
    kind: 'input',
    doc: 'A command-line or API argument is missing or outside its allowed range.',
  },
  STORE_UNAVAILABLE: {
    status: 503,
    kind: 'infrastructure',
    doc: 'The store (SQLite file or PostgreSQL) cannot be opened, migrated or reached, or the SQLite file has a second name (a hard link), under which processes would not see each other.',
  },
  NOT_FOUND: {
    status: 404,
    kind: 'state',
    doc: 'The scheduler, run, document, process or other resource does not exist (or is not visible to the caller).',
  },
  RECIPE_NOT_FOUND: {
    status: 400,
    kind: 'input',
    doc: 'A scheduler names a recipe that resolves nowhere: not in the project, not in `_tenant`, not built in.',
  },
  USER_NOT_FOUND: {
    status: 400,
    kind: 'input',
    doc: 'A `runAs` or `createdBy` names a user the tenant does not have.',
  },
  CONFIG_INVALID: {
    status: 500,
    kind: 'input',
    doc: 'The operator configuration (`ursa.yaml`, `URSA_*` variables, command-line flags) has a value that is not allowed; the error names each source, value and what is allowed.',
  },
  ENGINE_NOT_FOUND: {
    status: 400,
    kind: 'input',
    doc: 'A recipe names an engine this Ursa does not have: not built in (`shell`, `http`, `noop`), not configured, not registered by the library user; reported by `ursa validate` against a store.',
  },
  ENGINE_INVALID: {
    status: 500,
    kind: 'input',
    doc: 'An engine cannot be registered: its name is empty or another engine already has it.',
  },
  DOCUMENT_INVALID: {
    status: 400,
    kind: 'input',
    doc: 'A YAML document cannot be loaded safely: a syntax error, a duplicate key, more than one document, an alias bomb, nesting deeper than 64 levels, an unsupported tag, a body over 64 KiB, or a control character (U+0000–U+001F but tab, line feed and carriage return, U+007F–U+009F) or unpaired surrogate anywhere in it; the error names the document, the line and column or the field path, and the reason.',
  },
  SCHEDULER_INVALID: {
    status: 400,
    kind: 'input',
    doc: 'A scheduler document does not follow the scheduler schema; the error names the document and lists every issue as a field path and a reason.',
  },
  RECIPE_INVALID: {
    status: 400,
    kind: 'input',
    doc: 'A recipe document does not follow the recipe schema; the error names the document and lists every issue as a field path and a reason.',
  },
  WORKFLOW_INVALID: {
    status: 400,
    kind: 'input',
    doc: 'A workflow document does not follow the workflow schema (steps, parameters, references); the error names the document and lists every issue as a field path and a reason.',
  },
  TEMPLATE_FAILED: {
    status: 400,
    kind: 'input',
    doc: "A workflow step's params could not be rendered when the step started: a template went over one of the operator's template limits (render time, memory, list length, rendered size of a param or of the run) or referred to a value that is not there; the step fails with the param's path and the limit or reason.",
  },
  WORKFLOW_NOT_FOUND: {
    status: 400,
    kind: 'input',
    doc: 'A scheduler or a start names a workflow that resolves nowhere: not in the project, not in `_tenant`.',
  },
  NAME_INVALID: {
    status: 400,
    kind: 'input',
    doc: 'A scheduler, recipe or workflow name is outside `[A-Za-z0-9][A-Za-z0-9._-]{0,127}` or contains `..`.',
  },
  STORE_BUSY: {
    status: 503,
    kind: 'infrastructure',
    doc: 'The SQLite store stayed write-locked by another connection (a backup, the sqlite3 shell, a local `ursa` command) for longer than its busy timeout; nothing was written, and the request can be retried.',
  },
  STORE_FULL: {
    status: 507,
    kind: 'infrastructure',
    doc: 'The disk of the SQLite store is full: the write was rolled back whole and the store holds what it held before; free space and retry.',
  },
  STORE_LOCKED: {
    status: 409,
    kind: 'infrastructure',
    doc: 'A second serving process (`ursa serve`, `ursa worker`, an embedded start) tried to serve a SQLite store that the store records as served by a live process (whatever path, link or host it came from), or a process learned that another took its store over after it stalled past its lease; SQLite serves one process, PostgreSQL several.',
  },
  STORE_COPY_MISMATCH: {
    status: 500,
    kind: 'infrastructure',
    doc: "After a store copy or restore, the target does not hold what the source held: a table's row count or checksum differs; the summary names the tables. Copy again with `--force`.",
  },
  STORE_NOT_EMPTY: {
    status: 409,
    kind: 'state',
    doc: 'A store copy or restore was aimed at a store that already holds data; `--force` replaces its contents (never a merge).',
  },
  STORE_IN_USE: {
    status: 409,
    kind: 'state',
    doc: 'A store copy was asked of a source with live workers (a heartbeat within its lease): stop them first, or pass `--live` to copy a consistent snapshot of a running store.',
  },
  STORE_SCHEMA_MISMATCH: {
    status: 409,
    kind: 'state',
    doc: "A store copy cannot read its source: the source's schema version differs from this Ursa's (open it once with this version, or upgrade Ursa), or it holds a table this Ursa does not know.",
  },
  BACKUP_UNSUPPORTED: {
    status: 400,
    kind: 'input',
    doc: '`ursa backup` was asked of a PostgreSQL store: back it up with `pg_dump`, and restore it with `pg_restore`.',
  },
  CONFLICT: {
    status: 409,
    kind: 'state',
    doc: 'The request conflicts with what the store holds: a live document already has the path a trashed document would be restored to, or a user of that name already exists.',
  },
  FORBIDDEN: {
    status: 403,
    kind: 'state',
    doc: 'The caller may not do this: e.g. name another user than itself as `runAs` without the admin role.',
  },
  UNAUTHENTICATED: {
    status: 401,
    kind: 'state',
    doc: 'The request has no bearer token, or one that is unknown or revoked.',
  },
  VALIDATION_FAILED: {
    status: 400,
    kind: 'input',
    doc: "The request does not match the endpoint's schema; `errors` lists every field path and reason.",
  },
  INTERNAL: {
    status: 500,
    kind: 'infrastructure',
    doc: 'Something failed inside Ursa; the response says no more, the server log has the details.',
  },
  LOCKED: {
    status: 423,
    kind: 'state',
    doc: 'An agent tool tried to change a scheduler whose lockMode is protected or hidden; only people (REST, CLI, web) can change it. The message is the same for both modes and names neither.',
  },
  VERSION_MISMATCH: {
    status: 412,
    kind: 'state',
    doc: "A conditional write (REST `If-Match`, a tool's `expectedVersion`) expected another version of the document than the one stored, or a document that does not exist; the error names both versions, and nothing was written.",
  },
  ONE_SHOT_FIRED: {
    status: 410,
    kind: 'state',
    doc: 'A one-shot (`at:`) scheduler asked for by name fired and left the scheduler list: the message says when, which run it started, and where its document lies in the trash; to run it again, write it anew with a later `at:`.',
  },
  SCHEDULER_PAUSED: {
    status: 409,
    kind: 'state',
    doc: 'A manual fire or a backfill of a paused (or disabled) scheduler: the message carries the note its pause was given; resume it first. Nothing was recorded.',
  },
  SCHEDULER_INHERITED: {
    status: 409,
    kind: 'state',
    doc: 'A pause or resume in a project of a scheduler that comes from `_tenant`: pause it in `_tenant` to pause it in every project, or write a project document of that name (an override) to pause it in this project only.',
  },
  ATTEMPT_STALE: {
    status: 409,
    kind: 'state',
    doc: "A callback of an agent service carried a fencing token or attempt that is not its run's current attempt (an earlier attempt, a worker that lost the run): refused, and nothing changed; the message names the current attempt.",
  },
  NOT_A_QUESTION: {
    status: 409,
    kind: 'state',
    doc: 'An answer was given to an inbox item that is not a question (only a `question` item, asked by a blocked agent run, takes one); nothing changed.',
  },
} as const satisfies Record<string, { status: number; kind: ErrorKind; doc: string }>;

/** A stable error code from {@link errorCatalogue}. */
export type ErrorCode = keyof typeof errorCatalogue;

/** A code of kind `input` or `state`: Ursa's refusal of what it was asked, raised as a plain {@link UrsaError}. */
export type RefusalCode = {
  [C in ErrorCode]: (typeof errorCatalogue)[C]['kind'] extends 'infrastructure' ? never : C;
}[ErrorCode];

/** A code of kind `infrastructure`: raised only as an `InfrastructureError` (`ursa-error.ts`). */
export type InfrastructureCode = Exclude<ErrorCode, RefusalCode>;
