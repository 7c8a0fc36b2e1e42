import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { Run } from '../runs/run.js';
import type { Runtime } from '../runtime/context.js';
import type { WorkflowRunner } from '../runtime/workflow-runner.js';
import { authenticate } from './auth.js';
import { MAX_PARAM_LENGTH, sendProblem } from './problem.js';
import { traceRequests } from './request-spans.js';
import { agentRunRoutes } from './routes/agent-runs.js';
import { healthRoutes } from './routes/health.js';
import { inboxAnswerRoutes } from './routes/inbox-answers.js';
import { mcpRoutes } from './routes/mcp.js';
import { recipeRoutes } from './routes/recipes.js';
import { resourceRoutes } from './routes/resources.js';
import { schedulerRoutes } from './routes/schedulers.js';
import { versionRoutes } from './routes/versions.js';
import { webRoutes } from './routes/web.js';
import { workflowRoutes } from './routes/workflows.js';

/** What the HTTP app needs besides the runtime. */
export interface AppOptions {
  readonly rt: Runtime;
  /** Whether the scheduling loop runs (for `/readyz`); absent: the API serves without a loop. */
  readonly loopRunning?: () => boolean;
  /** Largest request body, bytes (decisions §6: scheduler documents are at most 64 KiB). */
  readonly bodyLimit?: number;
  /** Where workflow runs started through the API run: the worker's runner (absent: one of the API's own). */
  readonly workflows?: WorkflowRunner;
  /**
   * Gives a scheduler's lane to its waiting run, when a worker runs in this process (an agent
   * run ended by its service's callback, issue #25); absent: the next reap of any worker does.
   */
  readonly promoteWaiting?: (run: Run) => Promise<unknown>;
  /** Retries an agent run its service reported failed, on the worker of this process (issue #25). */
  readonly retryAgentRun?: (run: Run, reason: string) => Promise<boolean>;
}

/**
 * Builds the REST API (issue #7) without listening, so tests drive it with `inject()`: spec §10
 * paths under `/brain/{tenant}/project/{project}/…`, bearer tokens (decisions §6), errors as
 * `application/problem+json`, the OpenAPI document at `/openapi.json` and its reference at `/docs`.
 */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: false,
    bodyLimit: options.bodyLimit ?? 256 * 1024,
    ajv: { customOptions: { removeAdditional: false } },
    // A path segment may be a whole name (128 characters, decisions §6) and more, so the route's
    // own schema refuses a long one by its field path; beyond this the router refuses it.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // The router's own refusals (bad percent-encoding, an overlong segment) leave as problems too.
    frameworkErrors: (error, request, reply) => sendProblem(error, request, reply),
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(sendProblem);
  app.setNotFoundHandler((request, reply) => sendProblem({ statusCode: 404 }, request, reply));
  // Scheduler documents may arrive as YAML text as well as JSON.
  app.addContentTypeParser(
    ['application/yaml', 'text/yaml', 'application/x-yaml', 'text/plain'],
    { parseAs: 'string' },
    (_req, body, done) => {
      done(null, body);
    },
  );
  // Before authentication: a refused request is a span too (issue #26 item 3).
  if (options.rt.tracer !== undefined) traceRequests(app, options.rt.tracer, options.rt.clock);
  app.addHook('onRequest', (request) => authenticate(request, options.rt));

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Ursa',
        version: '0.1.0',
        description:
          'A durable scheduler for agent runs. Errors are application/problem+json (RFC 9457) with a stable `code`.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          // Issue #25: an agent run's callbacks take its run credential, never a token.
          runCredential: {
            type: 'http',
            scheme: 'bearer',
            description:
              'The run credential the run was started with (callback.credential); valid for that run until it ends',
          },
        },
      },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });

  await healthRoutes(app, options);
  await schedulerRoutes(app, options);
  await resourceRoutes(app, options);
  await versionRoutes(app, options);
  await workflowRoutes(app, options);
  await recipeRoutes(app, options);
  await mcpRoutes(app, options);
  await agentRunRoutes(app, options);
  await inboxAnswerRoutes(app, options);
  await webRoutes(app, options);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}
