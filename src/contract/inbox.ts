import { z } from 'zod';
import { instant, limitQuery, segment, userName, writtenText } from './common.js';
import { INBOX_KINDS } from './vocabulary.js';

/** A user's inbox (decisions §2) on the wire: `GET /brain/:tenant/inbox`, `POST …/inbox/read`. */

/** An inbox item. */
export const inboxItemSchema = z.object({
  id: z.number(),
  user: z.string(),
  kind: z.enum(INBOX_KINDS),
  title: z.string(),
  body: z.string(),
  project: z.string().nullable(),
  scheduler: z.string().nullable(),
  correlationId: z.string().nullable(),
  logPath: z.string().nullable(),
  createdAt: instant,
  readAt: instant.nullable(),
  // A question's answer (issue #25): on `question` items only, null until it is answered.
  answer: z
    .string()
    .nullable()
    .optional()
    .describe("A question item's answer; null until answered, absent on other kinds"),
  answeredBy: z.string().nullable().optional().describe('Who answered the question; null until answered'),
  answeredAt: instant.nullable().optional().describe('When the question was answered; null until answered'),
});

/** `GET /brain/:tenant/inbox`: whose, read items too or not, a page below `before`. */
export const inboxQuery = z.strictObject({
  user: userName.optional().describe("Whose inbox; default the token's user (another user needs admin)"),
  all: z.enum(['true', 'false']).default('false').describe('true: read items too; default unread only'),
  limit: limitQuery(20),
  before: z.coerce.number().int().min(1).optional().describe('The nextCursor of the previous page'),
});

/** A page of the inbox, newest first; `nextCursor` is the next page's `before`. */
export const inboxPageSchema = z.object({
  items: z.array(inboxItemSchema),
  nextCursor: z.number().nullable(),
});

/** `POST /brain/:tenant/inbox/read`: the items to mark read, and whose. */
export const markReadBody = z.strictObject({
  ids: z.array(z.number().int().min(1)).min(1).max(1000),
  user: userName.optional().describe("Whose items; default the token's user (another user needs admin)"),
});

/** How many items a mark-read changed. */
export const markReadResultSchema = z.object({ marked: z.number() });

/** `POST /brain/:tenant/inbox/:id/answer`: the answer to a question item (issue #25), and whose item. */
export const answerBody = z.strictObject({
  answer: writtenText(1, 16_384),
  user: userName.optional().describe("Whose item; default the token's user (another user needs admin)"),
});

/** The item a question's answer is for. */
export const inboxItemParams = z.strictObject({
  tenant: segment,
  id: z.coerce.number().int().min(1).describe('The inbox item id'),
});

/** What an answer did: recorded now, delivered to the agent service that asked by a worker's next pass. */
export const answerResultSchema = z.object({
  id: z.number(),
  answeredBy: z.string(),
  answeredAt: instant,
});
