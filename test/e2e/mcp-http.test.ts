import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { structured } from '../support/mcp.js';
import { eventually, serve } from '../support/server.js';

// issue #8: an MCP client from the SDK over Streamable HTTP against a real `ursa serve`.
describe('MCP over HTTP at /mcp of ursa serve', () => {
  it('lists the tools, creates a scheduler, fires it and reads its completed run log', {
    timeout: 40_000,
  }, async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ursa-mcp-http-'));
    const server = await serve(cwd, join(cwd, 'ursa.db'));
    try {
      const secret = /(ursa_[A-Za-z0-9_-]{43})/.exec(server.output().stderr)?.[1];
      expect(secret).toBeDefined();
      const transport = new StreamableHTTPClientTransport(
        new URL(`${server.url}/mcp?tenant=acme&project=ops`),
        {
          requestInit: { headers: { Authorization: `Bearer ${secret}` } },
        },
      );
      const client = new Client({ name: 'ursa-test', version: '1.0.0' });
      await client.connect(transport);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('scheduler_fire');
      const yaml = 'description: ping\ncron: "0 0 0 1 1 *"\ntimezone: UTC\nrecipe: noop\n';
      expect(
        structured(await client.callTool({ name: 'scheduler_set', arguments: { name: 'ping', yaml } })),
      ).toMatchObject({ created: true });
      const fired = structured(
        await client.callTool({ name: 'scheduler_fire', arguments: { name: 'ping' } }),
      );
      // The server's worker runs it; the agent follows the log until the run has ended.
      const body = await eventually(
        async () => {
          const log = structured(
            await client.callTool({ name: 'document_read', arguments: { path: fired.logPath } }),
          );
          return String(log.body).includes('outcome: completed') ? String(log.body) : undefined;
        },
        'the run log says completed',
        15_000,
      );
      expect(body).toContain(`correlationId: ${fired.correlationId}`);
      expect(body).toContain('trigger: manual');
      await client.close();

      // Without a token there is no MCP session.
      const anonymous = await fetch(`${server.url}/mcp?tenant=acme&project=ops`, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      });
      expect(anonymous.status).toBe(401);
    } finally {
      server.child.kill('SIGTERM');
      await server.exit;
    }
  });
});
