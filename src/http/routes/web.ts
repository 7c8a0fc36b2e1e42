import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { UrsaError } from '../../errors/index.js';
import type { AppOptions } from '../app.js';

/**
 * Where `npm run build:web` puts the scheduler editor (web/vite.config.ts): `dist/web/` of the
 * package. From `dist/http/routes/` and from `src/http/routes/` alike that is `../../../dist/web/`.
 */
export const WEB_ROOT = fileURLToPath(new URL('../../../dist/web/', import.meta.url));

const PAGE = 'scheduler.html';

/**
 * What the page may load: only its own scripts, styles and API (no CDN, no fonts from elsewhere);
 * styles inline too, for the ones CodeMirror writes at run time.
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Vite's hashed asset names: one flat file name, nothing that could leave `assets/`. */
const assetParams = z.strictObject({
  file: z
    .string()
    .regex(/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,200}$/, 'an asset file name')
    .describe('A file of the built page, e.g. scheduler-1a2b3c.js'),
});

/**
 * The scheduler editor (issue #9, spec §10) at `/` (and `/scheduler.html`) with its assets under
 * `/assets/`, served with @fastify/static from {@link WEB_ROOT}. No token is needed for these
 * files: the page asks for one and sends it with every API call. When the page was not built, `/`
 * answers NOT_FOUND saying how to build it; the API is not affected.
 */
export async function webRoutes(app: FastifyInstance, _options: AppOptions): Promise<void> {
  const root = WEB_ROOT;
  await app.register(async (scope) => {
    // serve: false — only reply.sendFile, inside this scope; the routes below are the whole surface.
    await scope.register(fastifyStatic, { root, serve: false, decorateReply: true });
    const r = scope.withTypeProvider<ZodTypeProvider>();

    const page = (reply: FastifyReply) => {
      if (!existsSync(`${root}${PAGE}`)) {
        throw new UrsaError(
          'NOT_FOUND',
          'the web page is not built: run npm run build (or npm run build:web)',
        );
      }
      return reply
        .header('content-security-policy', CSP)
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'no-referrer')
        .header('cache-control', 'no-cache')
        .sendFile(PAGE, root, { cacheControl: false });
    };
    const pageSchema = {
      tags: ['web'],
      summary: 'The scheduler editor page; it asks for a token and calls this API',
      security: [],
    };
    r.get('/', { schema: pageSchema }, async (_request, reply) => page(reply));
    r.get(`/${PAGE}`, { schema: pageSchema }, async (_request, reply) => page(reply));
    r.get(
      '/assets/:file',
      {
        schema: {
          tags: ['web'],
          summary: 'Scripts and styles of the scheduler editor page (content-hashed, cached for good)',
          security: [],
          params: assetParams,
        },
      },
      async (request, reply) =>
        reply
          .header('x-content-type-options', 'nosniff')
          .sendFile(`assets/${request.params.file}`, root, { maxAge: '365d', immutable: true }),
    );
  });
}
