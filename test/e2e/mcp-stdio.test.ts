import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { FIRE_AS_WRITTEN } from '../../src/contract/index.js';
import { MCP_INSTRUCTIONS } from '../../src/mcp/instructions.js';
import { structured } from '../support/mcp.js';

const BIN = resolve(import.meta.dirname, '../../dist/cli/main.js');

// issue #8: an MCP client from the SDK against a real `ursa mcp` process over stdio.
describe('ursa mcp over stdio', () => {
  it('lists the tools, creates a scheduler, fires it and reads its run log', {
    timeout: 30_000,
  }, async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'ursa-mcp-')), 'ursa.db');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--db', db, '--tenant', 'acme', '--project', 'ops', '--user', 'mia', '--admin'],
      env: { ...(process.env as Record<string, string>), URSA_LOG_LEVEL: 'warn' },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'ursa-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([
        'document_list',
        'document_read',
        'recipe_get',
        'recipe_list',
        'scheduler_backfill',
        'scheduler_delete',
        'scheduler_fire',
        'scheduler_get',
        'scheduler_list',
        'scheduler_pause',
        'scheduler_refresh',
        'scheduler_resume',
        'scheduler_set',
      ]);
      const yaml =
        'description: remind me\ncron: "0 0 9 * * MON-FRI"\ntimezone: Europe/Berlin\nrecipe: noop\n';
      expect(
        structured(await client.callTool({ name: 'scheduler_set', arguments: { name: 'remind', yaml } })),
      ).toMatchObject({ created: true });
      const listed = structured(await client.callTool({ name: 'scheduler_list', arguments: {} }));
      expect((listed.schedulers as { name: string }[]).map((s) => s.name)).toEqual(['remind']);
      const fired = structured(
        await client.callTool({ name: 'scheduler_fire', arguments: { name: 'remind' } }),
      );
      expect(fired.logPath).toMatch(/^_vance\/logs\/scheduler\/remind\//);
      const log = structured(
        await client.callTool({ name: 'document_read', arguments: { path: fired.logPath } }),
      );
      expect(log.body).toContain('trigger: manual');
      expect(log.body).toContain(`correlationId: ${fired.correlationId}`);
      // issue #23: params in a fire are refused with the reason, not dropped.
      const withParams = (await client.callTool({
        name: 'scheduler_fire',
        arguments: { name: 'remind', params: { day: 'monday' } },
      })) as { isError?: boolean; content: { text: string }[] };
      expect(withParams.isError).toBe(true);
      expect(withParams.content[0]?.text).toContain(FIRE_AS_WRITTEN);
      const refused = (await client.callTool({ name: 'scheduler_get', arguments: { name: 'nothing' } })) as {
        isError?: boolean;
        content: { text: string }[];
      };
      expect(refused.isError).toBe(true);
      expect(refused.content[0]?.text).toMatch(/^NOT_FOUND: there is no scheduler "nothing"/);
    } finally {
      await client.close();
    }
  });
});

// issue #23: the client closing stdin is the end of the session, not a crash (was exit 13).
describe('ursa mcp at the end of its input', () => {
  it('exits 0 when its client closes stdin', { timeout: 30_000 }, async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'ursa-mcp-')), 'ursa.db');
    const child = spawn(process.execPath, [BIN, 'mcp', '--db', db, '--tenant', 'acme', '--project', 'ops'], {
      env: { ...process.env, URSA_LOG_LEVEL: 'warn' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const answered = new Promise<string>((resolve) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(out);
      });
    });
    child.stdin.write(`${JSON.stringify(initialize)}\n`);
    const answer = JSON.parse(await answered);
    expect(answer).toMatchObject({ id: 1, result: { serverInfo: { name: 'ursa' } } });
    // issue #23: the initialize result tells the agent how to start.
    expect(answer.result.instructions).toBe(MCP_INSTRUCTIONS);
    child.stdin.end();
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
  });
});
