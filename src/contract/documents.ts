import { z } from 'zod';
import { instant, limitQuery } from './common.js';
import { ACTOR_INTERFACES, DOCUMENT_ACTIONS } from './vocabulary.js';

/** Documents of a project and their history (issue #7, issue #19): what the API answers and takes. */

/** A document as listed (without its body). */
export const documentSummarySchema = z.object({
  path: z.string(),
  version: z.number(),
  createdBy: z.string(),
  updatedAt: instant,
  expiresAt: instant.nullable(),
});

/** A document with its body. */
export const documentSchema = documentSummarySchema.extend({ body: z.string() });

/** `GET …/documents`: a page by path, after the cursor `after`. */
export const documentsQuery = z.strictObject({
  prefix: z.string().max(1024).default('').describe('Only documents whose path starts with this'),
  limit: limitQuery(100),
  after: z
    .string()
    .min(1)
    .max(1024)
    .optional()
    .describe('The nextCursor of the previous page: only paths after this one'),
});

/** A page of `GET …/documents`: `nextCursor` is the next page's `after` (null on the last). */
export const documentPageSchema = z.object({
  documents: z.array(documentSummarySchema),
  nextCursor: z.string().nullable(),
});

/** `GET …/documents/<path>/history`: a page below the cursor `before`. */
export const historyQuery = z.strictObject({
  limit: limitQuery(100).describe('history only: at most this many entries'),
  before: z.coerce
    .number()
    .int()
    .min(1)
    .optional()
    .describe('history only: the nextCursor of the previous page'),
});

/**
 * One entry of a document's history on the wire (REST `GET …/history`, the CLI's `doc history`;
 * issue #19): a version written, a delete or a restore, and by whom — the user, the token's id
 * (never its secret), the interface ({@link ACTOR_INTERFACES}) and whether an agent did it.
 * `at` is ISO-8601 UTC; `id` increases in the order actions were recorded.
 */
export const historyEntrySchema = z.object({
  id: z.number().describe('Increasing; the cursor of the next page'),
  version: z.number().describe('The version written, deleted or restored'),
  at: instant,
  action: z.enum(DOCUMENT_ACTIONS),
  path: z.string().describe('Where the document was (a delete: the path it was deleted from)'),
  trashPath: z.string().nullable().describe('A delete or restore: its path in _vance/trash/'),
  user: z.string(),
  tokenId: z.string().nullable().describe('The id of the token used; null for a local command or Ursa'),
  interface: z.enum(ACTOR_INTERFACES),
  agent: z.boolean().describe("true: an agent's tool call"),
});

/**
 * A page of a document's history, newest first: the entries below the request's cursor, and
 * `nextCursor`, the `before` of the next page (null on the last).
 */
export const historySchema = z.object({
  path: z.string(),
  history: z.array(historyEntrySchema),
  nextCursor: z.number().nullable(),
});

/** `GET …/documents/<path>`: the document; `GET …/documents/<path>/history`: its history page. */
export const documentOrHistorySchema = z.union([documentSchema, historySchema]);
