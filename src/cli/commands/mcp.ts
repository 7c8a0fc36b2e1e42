import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Command } from 'commander';
import { createMcpServer } from '../../mcp/server.js';
import { ensureUser } from '../../service/users.js';
import { openContext, withStoreOptions } from '../context.js';
import type { CliIo } from '../io.js';
import { scope } from './store-commands.js';

/**
 * `ursa mcp`: the agent tools over MCP on stdio (issue #8), for an agent runtime that starts Ursa
 * as a subprocess. The identity comes from flags or the environment (URSA_TENANT, URSA_PROJECT,
 * URSA_USER); standard output carries the protocol, so logs go to standard error.
 */
export function registerMcp(program: Command, io: CliIo): void {
  withStoreOptions(program.command('mcp'))
    .description(
      'serve the agent tools over MCP on stdio (identity from flags or URSA_TENANT/URSA_PROJECT/URSA_USER)',
    )
    .option('--user <user>', 'the user the agent acts for (default URSA_USER or "agent")')
    .option('--admin', 'also offer the admin tools (scheduler_refresh, scheduler_fire)')
    .action(async (options: { user?: string; admin?: boolean }, command: Command) => {
      const { config, rt, close } = await openContext(command, io);
      const { tenant, project } = scope(command, config);
      const user = options.user ?? io.env.URSA_USER ?? 'agent';
      await ensureUser(rt, tenant, user);
      const server = createMcpServer(rt, { tenant, project, user }, { admin: options.admin === true });
      const transport = new StdioServerTransport(process.stdin, process.stdout);
      const closed = new Promise<void>((resolve) => {
        transport.onclose = () => resolve();
      });
      // The SDK's transport does not watch for the end of input: a client that closes stdin would
      // leave this await unsettled (Node exits 13). End of input is the client saying goodbye.
      process.stdin.once('end', () => void transport.close());
      await server.connect(transport);
      await closed;
      await close();
    });
}
