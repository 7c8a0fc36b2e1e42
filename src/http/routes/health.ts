import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { InfrastructureError } from '../../errors/index.js';
import { checkStoreAnswers, storeIdentity } from '../../service/store.js';
import type { AppOptions } from '../app.js';

/** `/healthz` (process up), `/readyz` (store reachable, loop running) and `/metrics` (Prometheus). */
export async function healthRoutes(app: FastifyInstance, options: AppOptions): Promise<void> {
  const typed = app.withTypeProvider<ZodTypeProvider>();
  typed.get(
    '/healthz',
    {
      schema: {
        tags: ['health'],
        summary: 'The process is up',
        security: [],
        response: { 200: z.object({ status: z.literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );
  typed.get(
    '/readyz',
    {
      schema: {
        tags: ['health'],
        summary: 'The store answers and the scheduling loop runs',
        security: [],
        response: { 200: z.object({ status: z.literal('ready'), store: z.string(), loop: z.boolean() }) },
      },
    },
    async () => {
      await checkStoreAnswers(options.rt);
      const loop = options.loopRunning?.() ?? false;
      if (options.loopRunning !== undefined && !loop)
        throw new InfrastructureError('STORE_UNAVAILABLE', 'the scheduling loop is not running');
      return { status: 'ready' as const, store: storeIdentity(options.rt).dialect, loop };
    },
  );
  typed.get(
    '/metrics',
    { schema: { tags: ['health'], summary: 'Prometheus metrics', security: [], hide: true } },
    async (_request, reply) => {
      const registry = options.rt.metrics?.registry;
      if (registry === undefined) return reply.type('text/plain').send('');
      return reply.type(registry.contentType).send(await registry.metrics());
    },
  );
}
