import { UrsaError } from '../errors/index.js';

/**
 * One page of the documents an agent may see (`document_list`, issue #23): newest first by the
 * time each was last written, ties by path, so that a cursor names a place in an order that a
 * write elsewhere does not reshuffle. Pure: the caller filters what the agent may see first, so a
 * hidden document never takes a place on a page.
 */

/** What a page is made of: a path and when its document was last written (UTC epoch ms). */
export interface Dated {
  readonly path: string;
  readonly updatedAt: number;
}

/** A page: the paths, the cursor of the next page (null on the last) and whether more follow. */
export interface DocumentPage {
  readonly paths: string[];
  readonly nextCursor: string | null;
  readonly truncated: boolean;
}

/** Newest first, then by path (code-unit order). */
function compare(a: Dated, b: Dated): number {
  if (a.updatedAt !== b.updatedAt) return b.updatedAt - a.updatedAt;
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

/**
 * The cursor after `last`: its instant (UTC epoch ms) and path, `<ms>:<path>`. Plain text, not
 * encoded: it names a document the agent was just shown, nothing more.
 */
export function encodeCursor(last: Dated): string {
  return `${last.updatedAt}:${last.path}`;
}

/**
 * The place a cursor names.
 *
 * @throws UrsaError `ARGUMENT_INVALID` (field `cursor`) for text no page answered.
 */
export function decodeCursor(cursor: string): Dated {
  const match = /^([0-9]{1,15}):(.+)$/s.exec(cursor);
  if (match !== null) return { updatedAt: Number(match[1]), path: match[2] as string };
  throw new UrsaError(
    'ARGUMENT_INVALID',
    `cursor: ${JSON.stringify(cursor)} is not a cursor document_list returned`,
    {
      field: 'cursor',
      value: cursor,
      allowed: 'the nextCursor of the previous page, or none for the first page',
    },
  );
}

/**
 * At most `limit` of `documents` after `cursor` (from the start without one), newest first.
 *
 * @throws UrsaError `ARGUMENT_INVALID` for a bad cursor ({@link decodeCursor}).
 */
export function documentPage(documents: readonly Dated[], limit: number, cursor?: string): DocumentPage {
  const after = cursor === undefined ? undefined : decodeCursor(cursor);
  const sorted = [...documents].sort(compare);
  const rest = after === undefined ? sorted : sorted.filter((d) => compare(d, after) > 0);
  const page = rest.slice(0, limit);
  const last = page[page.length - 1];
  const truncated = rest.length > page.length && last !== undefined;
  return { paths: page.map((d) => d.path), nextCursor: truncated ? encodeCursor(last) : null, truncated };
}
