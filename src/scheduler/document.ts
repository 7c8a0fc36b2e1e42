import type { ValidationIssue } from '../errors/index.js';
import { parseAt } from '../time/at.js';
import { type TimeZone, timeZone } from '../time/zone.js';
import { fromZodIssues, issueMessage, sortIssues } from '../yaml/issues.js';
import { loadYamlDocument } from '../yaml/load.js';
import { documentRefused } from '../yaml/report.js';
import type { ScheduleBounds, SchedulerDefinition, SchedulerTarget, SchedulerTrigger } from './definition.js';
import { validateName } from './name.js';
import { SCHEDULER_FIELDS, type SchedulerFields, schedulerSchema } from './schema.js';

/** The wait before a run's first retry when `retry` names no `backoff`. */
const DEFAULT_BACKOFF = 'PT10S';
const DEFAULT_BACKOFF_MS = 10_000;

export { isValidName, NAME_PATTERN, NAME_RULE, validateName } from './name.js';
export { SCHEDULER_PREFIX, schedulerNameFromPath, schedulerPath } from './paths.js';

/** Which scheduler a document is: its name (file name without `.yaml`) and its path for messages. */
export interface SchedulerDocumentOptions {
  /** The scheduler name; must follow the name rule of decisions §6. */
  readonly name: string;
  /** The document path, e.g. `_vance/scheduler/nightly.yaml`; every message starts with it. */
  readonly path: string;
}

/** A validated scheduler, or every reason the document was refused. */
export type SchedulerValidation =
  | { readonly ok: true; readonly definition: SchedulerDefinition }
  | { readonly ok: false; readonly issues: ValidationIssue[] };

const EMPTY =
  'the document is empty; expected a mapping with description, cron or at, and recipe or workflow';

function isSet(document: Readonly<Record<string, unknown>>, field: string): boolean {
  return document[field] !== undefined && document[field] !== null;
}

/** The cross-field rule "exactly one of `a` and `b`" (spec §2), as a whole-document issue. */
function exactlyOne(document: Readonly<Record<string, unknown>>, a: string, b: string): ValidationIssue[] {
  const count = Number(isSet(document, a)) + Number(isSet(document, b));
  if (count === 1) return [];
  return [
    {
      path: '',
      message: `exactly one of ${a} and ${b} must be set; found ${count === 2 ? 'both' : 'neither'}`,
    },
  ];
}

function trigger(fields: SchedulerFields, definitionZone: SchedulerDefinition['zone']): SchedulerTrigger {
  if (fields.cron !== undefined)
    return { kind: 'cron', expression: fields.cron.expression, cron: fields.cron.cron };
  if (fields.at !== undefined)
    return { kind: 'at', at: fields.at, instant: parseAt(fields.at, definitionZone).instant };
  throw new Error('unreachable: a valid scheduler has cron or at');
}

function target(fields: SchedulerFields): SchedulerTarget {
  if (fields.recipe !== undefined) return { kind: 'recipe', recipe: fields.recipe };
  if (fields.workflow !== undefined) return { kind: 'workflow', workflow: fields.workflow };
  throw new Error('unreachable: a valid scheduler has recipe or workflow');
}

// The fields only a cron schedule has, with what each is in a message.
const CRON_ONLY: Readonly<Record<string, string>> = {
  startAt: 'bounds',
  endAt: 'bounds',
  maxRuns: 'bounds',
  jitter: 'jitter',
  pauseOnFailure: 'pauseOnFailure',
  retry: 'retries',
};

/**
 * The cross-field rules of the bounds, jitter, pauseOnFailure and retry: only a cron schedule has them (a
 * one-shot fires once, at its `at:`), and `startAt` comes before `endAt` (both read in the
 * scheduler's zone).
 */
function cronOnlyIssues(document: Readonly<Record<string, unknown>>): ValidationIssue[] {
  const set = Object.keys(CRON_ONLY).filter((field) => isSet(document, field));
  if (isSet(document, 'at') && set.length > 0)
    return set.map((field) => ({
      path: field,
      message: `only a cron schedule has ${CRON_ONLY[field]}; a one-shot fires once, at its at: instant`,
    }));
  const { startAt, endAt } = document;
  if (typeof startAt !== 'string' || typeof endAt !== 'string') return [];
  try {
    const zone = zoneOf(document.timezone);
    if (parseAt(startAt, zone).instant < parseAt(endAt, zone).instant) return [];
  } catch {
    return []; // a bad value or zone has its own issue
  }
  return [
    { path: 'endAt', message: `${JSON.stringify(endAt)} is not after startAt ${JSON.stringify(startAt)}` },
  ];
}

// A retry is a new attempt of a recipe run's process; a workflow run is not retried whole.
function retryIssues(document: Readonly<Record<string, unknown>>): ValidationIssue[] {
  if (!isSet(document, 'retry') || !isSet(document, 'workflow')) return [];
  return [
    { path: 'retry', message: 'only a recipe run is retried; a workflow run is not tried again whole' },
  ];
}

function zoneOf(timezone: unknown): TimeZone {
  return typeof timezone === 'string' && timezone.trim() !== '' ? timeZone(timezone) : timeZone('UTC');
}

function boundsOf(fields: SchedulerFields, zone: TimeZone): ScheduleBounds {
  return {
    startAt: fields.startAt === undefined ? undefined : parseAt(fields.startAt, zone).instant,
    endAt: fields.endAt === undefined ? undefined : parseAt(fields.endAt, zone).instant,
    maxRuns: fields.maxRuns,
  };
}

function definitionOf(name: string, fields: SchedulerFields): SchedulerDefinition {
  const zone = fields.timezone?.zone ?? timeZone('UTC');
  return {
    name,
    description: fields.description,
    trigger: trigger(fields, zone),
    timezone: fields.timezone?.id,
    zone,
    enabled: fields.enabled,
    target: target(fields),
    params: fields.params,
    initialMessage: fields.initialMessage,
    runAs: fields.runAs,
    overlap: fields.overlap,
    lockMode: fields.lockMode,
    tags: fields.tags,
    misfire: fields.misfire,
    catchUpWindow: fields.catchUpWindow?.text,
    catchUpWindowMs: fields.catchUpWindow?.ms,
    bounds: boundsOf(fields, zone),
    jitter: fields.jitter?.text,
    jitterMs: fields.jitter?.ms,
    pauseOnFailure: fields.pauseOnFailure,
    retry:
      fields.retry === undefined
        ? undefined
        : {
            attempts: fields.retry.attempts,
            backoff: fields.retry.backoff?.text ?? DEFAULT_BACKOFF,
            backoffMs: fields.retry.backoff?.ms ?? DEFAULT_BACKOFF_MS,
          },
  };
}

/**
 * Validates a scheduler document already read into plain values (a parsed YAML body or a REST
 * JSON body) against spec §2, §10a, §10b and decisions §3, §4, collecting every issue.
 *
 * Defaults: `enabled` true, `overlap` skip, `lockMode` full, `misfire` once, `tags` [], `params`
 * {}, no bounds. `at:`, `startAt` and `endAt` are read in `timezone:` (UTC when none). Issues come whole-document first, then in
 * field order (spec §2's table, then decisions §4), unknown fields last.
 *
 * @throws UrsaError `NAME_INVALID` when `options.name` breaks the name rule (decisions §6).
 */
export function validateSchedulerObject(
  value: unknown,
  options: SchedulerDocumentOptions,
): SchedulerValidation {
  const name = validateName(options.name, 'scheduler name');
  if (value === null || value === undefined) return { ok: false, issues: [{ path: '', message: EMPTY }] };
  const issues: ValidationIssue[] = [];
  if (typeof value === 'object' && !Array.isArray(value)) {
    const document = value as Readonly<Record<string, unknown>>;
    issues.push(
      ...exactlyOne(document, 'cron', 'at'),
      ...exactlyOne(document, 'recipe', 'workflow'),
      ...cronOnlyIssues(document),
      ...retryIssues(document),
    );
  }
  const parsed = schedulerSchema.safeParse(value, { error: issueMessage });
  if (!parsed.success) issues.push(...fromZodIssues(parsed.error.issues, schedulerSchema));
  if (!parsed.success || issues.length > 0)
    return { ok: false, issues: sortIssues(issues, SCHEDULER_FIELDS) };
  return { ok: true, definition: definitionOf(name, parsed.data) };
}

/**
 * {@link validateSchedulerObject} that throws: the definition, or `SCHEDULER_INVALID`.
 *
 * @throws UrsaError `SCHEDULER_INVALID` whose message has one line per issue,
 *   `<path>: <field path>: <reason>` (`<path>: <reason>` for a whole-document issue), `field` the
 *   first issue's path and `issues` the list; `NAME_INVALID` for a bad `options.name`.
 */
export function schedulerFromObject(value: unknown, options: SchedulerDocumentOptions): SchedulerDefinition {
  const result = validateSchedulerObject(value, options);
  if (!result.ok) throw documentRefused('SCHEDULER_INVALID', options.path, result.issues);
  return result.definition;
}

/**
 * Loads and validates a scheduler document's YAML text (`_vance/scheduler/<name>.yaml`, spec §2)
 * without throwing for bad input: a document the YAML loader refuses (decisions §6) gives its one
 * issue, a document the schema refuses every issue.
 *
 * @throws UrsaError `NAME_INVALID` when `options.name` breaks the name rule (decisions §6).
 */
export function validateSchedulerDocument(
  text: string,
  options: SchedulerDocumentOptions,
): SchedulerValidation {
  validateName(options.name, 'scheduler name');
  const loaded = loadYamlDocument(text, options.path);
  if (!loaded.ok) return { ok: false, issues: loaded.issues };
  return validateSchedulerObject(loaded.value, options);
}

/**
 * Loads and validates a scheduler document's YAML text (spec §2, §10a, §10b; decisions §3, §4, §6).
 *
 * @throws UrsaError `DOCUMENT_INVALID` when the YAML itself is refused (size over 64 KiB, syntax,
 *   duplicate key, several documents, alias bomb, nesting; see `parseYamlDocument`);
 *   `SCHEDULER_INVALID` listing every schema issue (see {@link schedulerFromObject});
 *   `NAME_INVALID` for a bad `options.name`.
 */
export function parseSchedulerDocument(text: string, options: SchedulerDocumentOptions): SchedulerDefinition {
  validateName(options.name, 'scheduler name');
  const loaded = loadYamlDocument(text, options.path);
  if (!loaded.ok) throw loaded.error;
  return schedulerFromObject(loaded.value, options);
}
