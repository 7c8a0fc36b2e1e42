import { z } from 'zod';
import { documentSchema } from '../contract/index.js';
import { RUN_LOG_PREFIX } from '../runtime/run-log.js';
import { defineTool } from './define.js';

/** The read-only document tools (spec §9, issue #23): one document, and a page of paths. */

const documentPath = z
  .string()
  .describe(
    `A document path, e.g. the logPath scheduler_fire returned (a run log under ${RUN_LOG_PREFIX}), _vance/scheduler/<name>.yaml or _vance/recipes/<name>.yaml.`,
  );

export const documentRead = defineTool({
  name: 'document_read',
  toolset: 'default',
  label: 'read-only',
  description: `Read one document of the current project: a run log (under ${RUN_LOG_PREFIX}: Markdown with YAML front matter — outcome, timeline, the process output), a scheduler, recipe or workflow document under _vance/, or a document outside _vance/. What you may not see answers "not found", as a document that is not there.`,
  input: z.object({ path: documentPath }),
  output: documentSchema.pick({ path: true, body: true }),
  handler: (scope, input) => scope.document(input.path),
});

export const documentList = defineTool({
  name: 'document_list',
  toolset: 'default',
  label: 'read-only',
  description: `List the documents of the current project whose path starts with a prefix (by default the run logs, ${RUN_LOG_PREFIX}; e.g. "${RUN_LOG_PREFIX}<scheduler>/", "_vance/recipes/", or "" for every document you may read), newest first (by when each was last written). At most limit paths a page; truncated is true when more follow: pass nextCursor back as cursor for the next page.`,
  input: z.object({
    prefix: z
      .string()
      .max(1024)
      .default(RUN_LOG_PREFIX)
      .describe(`A path prefix; ${RUN_LOG_PREFIX} by default.`),
    limit: z
      .number()
      .int()
      .min(1)
      .max(100)
      .default(100)
      .describe('At most this many paths (1-100, 100 by default).'),
    cursor: z
      .string()
      .max(4096)
      .optional()
      .describe('The nextCursor of the previous page; leave it out for the first page.'),
  }),
  output: z.object({
    paths: z.array(z.string()).describe('Newest first.'),
    nextCursor: z.string().nullable().describe('The cursor of the next page; null on the last.'),
    truncated: z.boolean().describe('true when more documents follow this page.'),
  }),
  handler: (scope, input) => scope.documents(input.prefix, input.limit, input.cursor),
});
