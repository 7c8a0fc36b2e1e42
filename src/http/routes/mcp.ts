import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { UrsaError } from '../../errors/index.js';
import { createMcpServer } from '../../mcp/server.js';
import type { AppOptions } from '../app.js';
import { callerFor } from '../auth.js';

const query = z.strictObject({
  project: z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/),
  tenant: z.string().optional().describe('Only for operator tokens, which are not bound to a tenant.'),
});

/**
 * MCP over Streamable HTTP at `/mcp?project=<p>` (issue #8): the identity is the bearer token's
 * tenant and user; admin tokens also get the admin toolset, read tokens only the read-only tools.
 * Stateless: each request gets its own server and transport, so any worker behind a load balancer
 * can answer.
 */
export async function mcpRoutes(app: FastifyInstance, options: AppOptions): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.post(
    '/mcp',
    { schema: { tags: ['agents'], summary: 'MCP (Streamable HTTP) for agent tools', querystring: query } },
    async (request, reply) => {
      const tenant = request.token?.tenant ?? request.query.tenant;
      if (request.token !== undefined && tenant === undefined) {
        throw new UrsaError(
          'ARGUMENT_INVALID',
          'tenant: an operator token must name the tenant: /mcp?tenant=<t>&project=<p>',
          { field: 'tenant' },
        );
      }
      const caller = callerFor(request, tenant ?? '', request.query.project, 'read');
      const server = createMcpServer(
        options.rt,
        { tenant: caller.tenant, project: caller.project, user: caller.user, tokenId: caller.tokenId },
        // A read token gets the read-only tools: over MCP as over REST it cannot write (decisions §6).
        { admin: caller.role === 'admin', readOnly: caller.role === 'read' },
      );
      const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
      reply.hijack();
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    },
  );
}
