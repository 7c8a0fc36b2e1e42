import type { Command } from 'commander';
import { UrsaError } from '../../errors/index.js';
import { validateName } from '../../scheduler/name.js';
import { ROLES, type Role, type TokenRecord } from '../../store/tokens.js';
import { formatInstant } from '../../time/instant.js';
import { commandConfig, openContext } from '../context.js';
import type { CliIo } from '../io.js';
import { table } from './history.js';

/** The longest label a token may carry. */
const MAX_LABEL = 200;

/** How `token list` shows a token's tenant: `*` for an operator token (every tenant). */
const ALL_TENANTS = '*';

function withDb(command: Command): Command {
  return command.option(
    '--db <path>',
    'store: a SQLite file path (default ./data/ursa.db) or a postgres:// URL; or URSA_DB',
  );
}

function parseRole(value: string): Role {
  if ((ROLES as readonly string[]).includes(value)) return value as Role;
  throw new UrsaError('ARGUMENT_INVALID', `role: ${JSON.stringify(value)} is not a role`, {
    field: 'role',
    value,
    allowed: `${ROLES.join(', ')} (read can GET, write also changes schedulers and fires, admin also refreshes and names another runAs)`,
  });
}

function tokenJson(token: TokenRecord) {
  return {
    id: token.id,
    tenant: token.tenant,
    role: token.role,
    user: token.user,
    label: token.label,
    createdAt: formatInstant(token.createdAt),
    revokedAt: token.revokedAt === null ? null : formatInstant(token.revokedAt),
  };
}

/** `ursa token create`: a new bearer token (decisions §6); its secret is printed once and never stored. */
function registerCreate(token: Command, io: CliIo): void {
  withDb(token.command('create'))
    .description('create a bearer token for the REST API; prints its secret once (only a hash is stored)')
    .requiredOption('--role <role>', `${ROLES.join(' | ')}`)
    .option('--tenant <tenant>', 'the tenant it is bound to (default "default", or URSA_TENANT)')
    .option('--all-tenants', 'bind it to every tenant (an operator token)')
    .option('--user <user>', 'the user it acts as (the creator of what it writes)', 'admin')
    .option('--label <label>', 'a note for token list, e.g. who or what holds it')
    .option('--json', 'print JSON {id, tenant, role, user, label, createdAt, revokedAt, secret}')
    .action(
      async (
        options: {
          role: string;
          tenant?: string;
          allTenants?: boolean;
          user: string;
          label?: string;
          json?: boolean;
        },
        command: Command,
      ) => {
        const role = parseRole(options.role);
        if (options.allTenants && options.tenant !== undefined) {
          throw new UrsaError('ARGUMENT_INVALID', 'tenant: --tenant and --all-tenants exclude each other', {
            field: 'tenant',
            value: options.tenant,
            allowed: 'either --tenant <tenant> or --all-tenants',
          });
        }
        validateName(options.user, 'user name');
        if (options.label !== undefined && options.label.length > MAX_LABEL) {
          throw new UrsaError('ARGUMENT_INVALID', `label: longer than ${MAX_LABEL} characters`, {
            field: 'label',
            allowed: `at most ${MAX_LABEL} characters`,
          });
        }
        // --tenant is a configuration override: the config has it, validated, or the default.
        const tenant = options.allTenants ? null : commandConfig(command, io).tenant;
        const { rt, close } = await openContext(command, io);
        try {
          const { token: created, secret } = await rt.repos.tokens.create(
            { tenant, role, user: options.user, label: options.label ?? null },
            rt.clock.now(),
          );
          if (options.json) {
            io.stdout.write(`${JSON.stringify({ ...tokenJson(created), secret }, null, 2)}\n`);
            return;
          }
          io.stdout.write(
            `created ${created.id}: role ${role}, ${tenant === null ? 'all tenants' : `tenant ${tenant}`}, user ${created.user}\n` +
              `secret (shown once; only its hash is stored): ${secret}\n`,
          );
        } finally {
          await close();
        }
      },
    );
}

/** `ursa token list`: every token with its binding and state, never a secret. */
function registerList(token: Command, io: CliIo): void {
  withDb(token.command('list'))
    .description('list the tokens of the store (never their secrets), oldest first')
    .option('--json', 'print a JSON array of {id, tenant, role, user, label, createdAt, revokedAt}')
    .action(async (options: { json?: boolean }, command: Command) => {
      const { rt, close } = await openContext(command, io);
      try {
        const tokens = await rt.repos.tokens.list();
        if (options.json) {
          io.stdout.write(`${JSON.stringify(tokens.map(tokenJson), null, 2)}\n`);
          return;
        }
        if (tokens.length === 0) {
          io.stdout.write('no tokens (ursa serve creates an admin token on its first start)\n');
          return;
        }
        const rows = tokens.map((t) => [
          t.id,
          t.tenant ?? ALL_TENANTS,
          t.role,
          t.user,
          formatInstant(t.createdAt),
          t.revokedAt === null ? 'live' : `revoked ${formatInstant(t.revokedAt)}`,
          t.label ?? '',
        ]);
        for (const line of table([['ID', 'TENANT', 'ROLE', 'USER', 'CREATED', 'STATE', 'LABEL'], ...rows]))
          io.stdout.write(`${line.trimEnd()}\n`);
      } finally {
        await close();
      }
    });
}

/** `ursa token revoke <id>`: the token stops working at once. */
function registerRevoke(token: Command, io: CliIo): void {
  withDb(token.command('revoke'))
    .description('revoke a token: requests with it are refused from now on')
    .argument('<id>', 'the token id (tok_…), as token list prints it')
    .action(async (id: string, _options: unknown, command: Command) => {
      const { rt, close } = await openContext(command, io);
      try {
        if (!(await rt.repos.tokens.revoke(id, rt.clock.now()))) {
          throw new UrsaError('NOT_FOUND', `id: ${JSON.stringify(id)} is not a live token`, {
            field: 'id',
            value: id,
            allowed: 'the id of a live token (ursa token list)',
          });
        }
        io.stdout.write(`revoked ${id}\n`);
      } finally {
        await close();
      }
    });
}

/** `ursa token create|list|revoke`: bearer tokens of the REST API (decisions §6), on the local store. */
export function registerTokenCommands(program: Command, io: CliIo): void {
  const token = program
    .command('token')
    .description('create, list and revoke bearer tokens of the REST API (on the local store)');
  registerCreate(token, io);
  registerList(token, io);
  registerRevoke(token, io);
}
