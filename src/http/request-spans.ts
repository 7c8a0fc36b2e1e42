import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
} from '@opentelemetry/semantic-conventions';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Tracer } from '../runtime/tracer.js';
import type { Clock } from '../time/clock.js';

/**
 * A span per REST request (issue #26 item 3), recorded when its response is sent: named by its
 * route's pattern (`GET /brain/:tenant/project/:project/schedulers/:name`), never its raw URL, and
 * with only the method, the route and the status — no token, body, path value or query value
 * reaches a trace. A 5xx response is an error (OpenTelemetry's HTTP server conventions).
 * Registered first, so the span covers authentication. Instants from `clock`, UTC ms.
 */
export function traceRequests(app: FastifyInstance, tracer: Tracer, clock: Clock): void {
  const started = new WeakMap<FastifyRequest, number>();
  app.addHook('onRequest', async (request) => {
    started.set(request, clock.now());
  });
  app.addHook('onResponse', async (request, reply) => {
    const endMs = clock.now();
    const route = request.routeOptions.url;
    const status = reply.statusCode;
    tracer.record({
      name: route === undefined ? request.method : `${request.method} ${route}`,
      kind: 'server',
      startMs: started.get(request) ?? endMs,
      endMs,
      attributes: {
        [ATTR_HTTP_REQUEST_METHOD]: request.method,
        [ATTR_HTTP_RESPONSE_STATUS_CODE]: status,
        ...(route === undefined ? {} : { [ATTR_HTTP_ROUTE]: route }),
      },
      ...(status >= 500 ? { error: `HTTP ${status}` } : {}),
    });
  });
}
