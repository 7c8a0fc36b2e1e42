import { z } from 'zod';
import { segment } from './common.js';

/**
 * Versions of a scheduler document and the trash over REST (issue #23): read a version kept in
 * the archive, write it back as the newest version, and put a trashed document back.
 */

/** `GET …/scheduler/:name/versions/:version`. */
export const schedulerVersionParams = z.strictObject({
  tenant: segment,
  project: segment,
  name: segment,
  version: z.coerce.number().int().min(1).describe('A version its history lists'),
});

/** One version of a scheduler document; `current`: it is the live document's version. */
export const schedulerVersionSchema = z.object({
  name: z.string(),
  path: z.string(),
  version: z.number(),
  yaml: z.string(),
  current: z.boolean(),
});

/** `POST …/scheduler/:name/restore`: which version to write back. */
export const restoreVersionBody = z.strictObject({
  version: z.number().int().min(1).describe('A version its history lists; written back as the newest'),
});

/** `POST …/documents/restore`: the trashed document to put back. */
export const trashRestoreBody = z.strictObject({
  path: z
    .string()
    .min(1)
    .max(1024)
    .describe('Its path in _vance/trash/ (GET …/documents?prefix=_vance/trash/ lists them)'),
});

/** What a trash restore did: where the document is again, and where it was in the trash. */
export const trashRestoreResultSchema = z.object({ path: z.string(), trashPath: z.string() });

/** `GET …/scheduler/:name/versions/:version`. */
export type SchedulerVersionView = z.infer<typeof schedulerVersionSchema>;
/** The body of `POST …/scheduler/:name/restore`. */
export type RestoreVersionBody = z.infer<typeof restoreVersionBody>;
/** The body of `POST …/documents/restore`. */
export type TrashRestoreBody = z.infer<typeof trashRestoreBody>;
/** `POST …/documents/restore`. */
export type TrashRestoreView = z.infer<typeof trashRestoreResultSchema>;
