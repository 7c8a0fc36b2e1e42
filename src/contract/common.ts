import { z } from 'zod';
import { ALLOWED_CHARACTERS, findForbiddenCharacter, forbiddenCharacterWords } from '../yaml/characters.js';
import { RUN_STATES } from './vocabulary.js';

/**
 * The pieces every part of the REST contract shares: path parameters, the problem document,
 * instants, outcomes, names and ids, the page query. Path and query objects are strict (an unknown
 * member is a 400), views are not (decisions §6 name rule; spec §10).
 */

/** Path segments: tenant and project names (decisions §6 name rule, `_tenant` allowed). */
export const segment = z
  .string()
  .regex(/^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/, 'a name: letters, digits, ".", "_", "-", at most 128');

/** An opaque id of a run or process (`run_<uuid>`, `proc_<uuid>`). */
export const id = z
  .string()
  .regex(/^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/, 'an id: letters, digits, ".", "_", "-"');

/** User names (decisions §6 name rule). */
export const userName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'a user name: letters, digits, ".", "_", "-", at most 128');

export const tenantParams = z.strictObject({ tenant: segment });
export const projectParams = z.strictObject({ tenant: segment, project: segment });
export const schedulerParams = z.strictObject({ tenant: segment, project: segment, name: segment });
export const runParams = z.strictObject({ tenant: segment, project: segment, correlationId: id });
export const processParams = z.strictObject({ tenant: segment, project: segment, id });
export const documentParams = z.strictObject({
  tenant: segment,
  project: segment,
  '*': z.string().min(1, 'a document path is required').max(1024),
});

/** RFC 9457 problem document with Ursa's stable code (docs/errors.md). */
export const problemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number(),
  code: z.string(),
  detail: z.string(),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  allowed: z.string().optional(),
});

/** An instant on the wire: ISO-8601 UTC text (`formatInstant`). */
export const instant = z.string().describe('ISO-8601 UTC instant');

/** A run's outcome (spec §9a), as the feed, the runs table and the run log say it. */
export const outcome = z
  .string()
  .describe(
    'pending | completed | failed | cancelled | skipped_overlap | skipped_overlap_queued | skipped_misfire | ' +
      'skipped_deleted | skipped_disabled (the scheduler was deleted or disabled before the run started) | ' +
      'skipped_bounds (before startAt, after endAt, or maxRuns runs already started) | ' +
      'skipped_budget (its project started as many runs as scheduler.budget.runsPerHour or runsPerDay allow)',
  );

/** `?limit=`: 1 to 1000, `fallback` when absent. */
export const limitQuery = (fallback: number) => z.coerce.number().int().min(1).max(1000).default(fallback);

/** `?limit=&before=`: a page of a feed, newest first, below the cursor `before`. */
export const pageQuery = z.strictObject({
  limit: limitQuery(20),
  before: z.coerce.number().int().min(1).optional(),
});

/** A document that could not be loaded: its path and every reason, in one message. */
export const invalidDocumentSchema = z.object({ path: z.string(), message: z.string() });

/** A create-or-replace of a YAML document: the text itself (application/yaml) or `{"yaml": "..."}`. */
export const yamlBody = z.union([z.string(), z.strictObject({ yaml: z.string() })]);

/** A run's state as every surface shows it (`RUN_STATES`, issue #23). */
export const runState = z.enum(RUN_STATES);

/**
 * How a run relates to the others of its lane (spec §5, issue #23): whom it waited behind and
 * since when, which waiting run it was folded into, and the requests folded into it (how many,
 * the oldest few by correlation id).
 */
export const runLinks = {
  queuedAt: instant.nullable().describe('When it began to wait in its lane; null if it never waited'),
  waitingBehind: z.string().nullable().describe('The correlation id of the active run it waited behind'),
  foldedInto: z
    .string()
    .nullable()
    .describe('The correlation id of the waiting run it was folded into (skipped_overlap_queued)'),
  folded: z
    .object({ count: z.number().int(), first: z.array(z.string()) })
    .nullable()
    .describe('The later requests folded into this run while it waited: how many, and the oldest few'),
};

/**
 * Text a person or a service wrote (an agent run's output, question, answer), `min` to `max`
 * characters, without control characters but tab, line feed and carriage return: a terminal that
 * prints it or a store that keeps it (PostgreSQL refuses NUL) gets text only.
 */
export const writtenText = (min: number, max: number) =>
  z
    .string()
    .min(min)
    .max(max)
    .superRefine((value, ctx) => {
      const found = findForbiddenCharacter(value);
      if (found !== undefined)
        ctx.addIssue({
          code: 'custom',
          message: `holds ${forbiddenCharacterWords(found)} at character ${found.index + 1}; allowed: ${ALLOWED_CHARACTERS}`,
        });
    });
