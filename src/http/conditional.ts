import type { FastifyReply, FastifyRequest } from 'fastify';
import { UrsaError } from '../errors/index.js';
import type { VersionGuard } from '../service/caller.js';

/** The `ETag` of a document version (issue #19): its version, quoted (a strong entity tag). */
export function etag(version: number): string {
  return `"${version}"`;
}

/** Sets the `ETag` of a response to the version of the document it shows or wrote. */
export function withEtag(reply: FastifyReply, version: number): FastifyReply {
  return reply.header('etag', etag(version));
}

const STRONG_VERSION = /^"([1-9][0-9]{0,14})"$/;

/**
 * The compare-and-swap a request asks for with `If-Match` (issue #19): one strong entity tag as
 * Ursa sends it in `ETag`, `"<version>"`; without the header, none (the last writer wins). A
 * document that does not exist matches no tag: the write answers 412. This is a subset of RFC
 * 9110's `If-Match`: its other forms (`*`, lists, weak tags) are refused rather than guessed at,
 * so a client that means something else learns it at once.
 *
 * @throws UrsaError `ARGUMENT_INVALID` (field `If-Match`) for any other value: a list, a weak tag,
 *   `*`, an unquoted number — nothing is written.
 */
export function ifMatch(request: FastifyRequest): VersionGuard {
  const header = request.headers['if-match'];
  if (header === undefined) return {};
  const value = Array.isArray(header) ? header.join(', ') : header;
  const match = STRONG_VERSION.exec(value.trim());
  if (match === null) {
    throw new UrsaError(
      'ARGUMENT_INVALID',
      `If-Match: ${JSON.stringify(value)} is not the ETag of a document version; send the ETag a GET or PUT answered, e.g. "3"`,
      { field: 'If-Match', value, allowed: 'one ETag as sent by Ursa: a version in double quotes, e.g. "3"' },
    );
  }
  return { expectedVersion: Number(match[1]), expectedField: 'If-Match' };
}
