import type { Command } from 'commander';
import { UrsaError } from '../../errors/index.js';
import { validateName } from '../../scheduler/name.js';
import { MAX_ROTATION_GRACE_MS, ROLES, type Role, type TokenRecord } from '../../service/records.js';
import { createToken, listTokens, revokeToken, rotateToken } from '../../service/tokens.js';
import { MS_PER_DAY } from '../../time/calendar.js';
import { formatDuration, parseFixedDuration } from '../../time/duration.js';
import { formatInstant, parseInstant } from '../../time/instant.js';
import { commandConfig, openContext } from '../context.js';
import type { CliIo } from '../io.js';
import { table } from '../table.js';

/** The longest label a token may carry. */
const MAX_LABEL = 200;

/** How `token list` shows a token's tenant or project: `*` for every tenant or every project. */
const ALL = '*';

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

const isoOrNull = (ms: number | null) => (ms === null ? null : formatInstant(ms));

function tokenJson(token: TokenRecord) {
  return {
    id: token.id,
    tenant: token.tenant,
    project: token.project,
    role: token.role,
    user: token.user,
    label: token.label,
    createdAt: formatInstant(token.createdAt),
    expiresAt: isoOrNull(token.expiresAt),
    lastUsedAt: isoOrNull(token.lastUsedAt),
    revokedAt: isoOrNull(token.revokedAt),
  };
}

/** A fixed-length ISO-8601 duration option in ms, from `minMs` (0 allows zero) to `maxMs`. */
function durationOption(field: string, text: string, minMs: number, maxMs: number, example: string): number {
  const parsed = parseFixedDuration(text, { allowZero: minMs === 0 });
  let reason: string | undefined;
  if ('reason' in parsed) reason = parsed.reason;
  else if (parsed.ms < minMs) reason = `${JSON.stringify(text)} is too short`;
  else if (parsed.ms > maxMs) reason = `${JSON.stringify(text)} is too long`;
  else return parsed.ms;
  throw new UrsaError('ARGUMENT_INVALID', `${field}: ${reason}`, {
    field,
    value: text,
    allowed: `an ISO-8601 duration in weeks, days, hours, minutes or seconds, at most ${formatDuration(maxMs)}, e.g. ${example}`,
  });
}

/** The longest lifetime `--expires-in`/`--expires-at` may give a token: ten years. */
const MAX_LIFETIME_MS = 3_652 * MS_PER_DAY;

/** When a token created at `now` expires (UTC epoch ms), from `--expires-in` or `--expires-at`; null: never. */
function expiryOption(options: { expiresIn?: string; expiresAt?: string }, now: number): number | null {
  if (options.expiresIn !== undefined && options.expiresAt !== undefined) {
    throw new UrsaError('ARGUMENT_INVALID', 'expires-in: --expires-in and --expires-at exclude each other', {
      field: 'expires-in',
      value: options.expiresIn,
      allowed: 'either --expires-in <duration> or --expires-at <instant>',
    });
  }
  if (options.expiresIn !== undefined) {
    return now + durationOption('expires-in', options.expiresIn, 1000, MAX_LIFETIME_MS, 'P30D');
  }
  if (options.expiresAt === undefined) return null;
  const at = parseInstant(options.expiresAt, 'expires-at');
  if (at <= now || at - now > MAX_LIFETIME_MS) {
    throw new UrsaError(
      'ARGUMENT_INVALID',
      `expires-at: ${JSON.stringify(options.expiresAt)} is ${at <= now ? 'not in the future' : 'too far ahead'}`,
      {
        field: 'expires-at',
        value: options.expiresAt,
        allowed: `an instant after now (${formatInstant(now)}) and at most ten years ahead`,
      },
    );
  }
  return at;
}

/** A token's state at `now` for `token list`: live, expired, or revoked with when. */
function stateOf(token: TokenRecord, now: number): string {
  if (token.revokedAt !== null) return `revoked ${formatInstant(token.revokedAt)}`;
  return token.expiresAt !== null && now >= token.expiresAt ? 'expired' : 'live';
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
    .option(
      '--project <project>',
      'narrow it to one project of its tenant (_tenant only when named); other projects answer 404',
    )
    .option('--expires-in <duration>', 'expire it after an ISO-8601 duration, e.g. P30D or PT12H')
    .option('--expires-at <instant>', 'expire it at an ISO-8601 instant, e.g. 2026-12-31T00:00:00Z')
    .option(
      '--json',
      'print JSON {id, tenant, project, role, user, label, createdAt, expiresAt, lastUsedAt, revokedAt, secret}',
    )
    .action(
      async (
        options: {
          role: string;
          tenant?: string;
          allTenants?: boolean;
          user: string;
          label?: string;
          project?: string;
          expiresIn?: string;
          expiresAt?: string;
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
        if (options.allTenants && options.project !== undefined) {
          throw new UrsaError(
            'ARGUMENT_INVALID',
            'project: a project scope needs a tenant, not --all-tenants',
            {
              field: 'project',
              value: options.project,
              allowed: '--tenant <tenant> --project <project>',
            },
          );
        }
        // --tenant and --project are configuration overrides: the config has them, validated.
        const config = commandConfig(command, io);
        const tenant = options.allTenants ? null : config.tenant;
        const project = options.project === undefined ? null : config.project;
        const now = io.clock.now();
        const expiresAt = expiryOption(options, now);
        const { rt, close } = await openContext(command, io);
        try {
          const { token: created, secret } = await createToken(
            rt,
            { tenant, project, role, user: options.user, label: options.label ?? null, expiresAt },
            now,
          );
          if (options.json) {
            io.stdout.write(`${JSON.stringify({ ...tokenJson(created), secret }, null, 2)}\n`);
            return;
          }
          const scope = project === null ? '' : `, project ${project}`;
          const expiry = expiresAt === null ? '' : `, expires ${formatInstant(expiresAt)}`;
          io.stdout.write(
            `created ${created.id}: role ${role}, ${tenant === null ? 'all tenants' : `tenant ${tenant}`}${scope}, user ${created.user}${expiry}\n` +
              secretLine(secret),
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
    .option(
      '--json',
      'print a JSON array of {id, tenant, project, role, user, label, createdAt, expiresAt, lastUsedAt, revokedAt}',
    )
    .action(async (options: { json?: boolean }, command: Command) => {
      const { rt, close } = await openContext(command, io);
      try {
        const tokens = await listTokens(rt);
        if (options.json) {
          io.stdout.write(`${JSON.stringify(tokens.map(tokenJson), null, 2)}\n`);
          return;
        }
        if (tokens.length === 0) {
          io.stdout.write('no tokens (ursa serve creates an admin token on its first start)\n');
          return;
        }
        const now = rt.clock.now();
        const rows = tokens.map((t) => [
          t.id,
          t.tenant ?? ALL,
          t.project ?? ALL,
          t.role,
          t.user,
          formatInstant(t.createdAt),
          t.expiresAt === null ? 'never' : formatInstant(t.expiresAt),
          t.lastUsedAt === null ? 'never' : formatInstant(t.lastUsedAt),
          stateOf(t, now),
          t.label ?? '',
        ]);
        const head = [
          'ID',
          'TENANT',
          'PROJECT',
          'ROLE',
          'USER',
          'CREATED',
          'EXPIRES',
          'LAST USED',
          'STATE',
          'LABEL',
        ];
        for (const line of table([head, ...rows])) io.stdout.write(`${line.trimEnd()}\n`);
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
        if (!(await revokeToken(rt, id))) throw notLive(id);
        io.stdout.write(`revoked ${id}\n`);
      } finally {
        await close();
      }
    });
}

/** `ursa token rotate <id>`: a new secret for the same token; the old one stops at once or after `--grace`. */
function registerRotate(token: Command, io: CliIo): void {
  withDb(token.command('rotate'))
    .description(
      'give a token a new secret (same id, tenant, project, role, user and expiry); prints it once',
    )
    .argument('<id>', 'the token id (tok_…), as token list prints it')
    .option(
      '--grace <duration>',
      `let the old secret work for an ISO-8601 duration more, at most ${formatDuration(MAX_ROTATION_GRACE_MS)} (default: it stops now)`,
    )
    .option('--json', 'print JSON of the token with its new secret and oldSecretUntil')
    .action(async (id: string, options: { grace?: string; json?: boolean }, command: Command) => {
      const graceMs =
        options.grace === undefined
          ? 0
          : durationOption('grace', options.grace, 0, MAX_ROTATION_GRACE_MS, 'PT5M');
      const { rt, close } = await openContext(command, io);
      try {
        const now = rt.clock.now();
        const rotated = await rotateToken(rt, id, now, graceMs);
        if (rotated === undefined) throw notLive(id);
        const until = now + graceMs;
        if (options.json) {
          const json = {
            ...tokenJson(rotated.token),
            secret: rotated.secret,
            oldSecretUntil: formatInstant(until),
          };
          io.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
          return;
        }
        io.stdout.write(
          `rotated ${id}: the old secret ${graceMs === 0 ? 'stopped working now' : `works until ${formatInstant(until)}`}\n` +
            secretLine(rotated.secret),
        );
      } finally {
        await close();
      }
    });
}

/** The line that shows a new secret, once. */
function secretLine(secret: string): string {
  return `secret (shown once; only its hash is stored): ${secret}\n`;
}

/** `NOT_FOUND` for an id that names no live token. */
function notLive(id: string): UrsaError {
  return new UrsaError('NOT_FOUND', `id: ${JSON.stringify(id)} is not a live token`, {
    field: 'id',
    value: id,
    allowed: 'the id of a live token (ursa token list)',
  });
}

/** `ursa token create|list|rotate|revoke`: bearer tokens of the REST API (decisions §6), on the local store. */
export function registerTokenCommands(program: Command, io: CliIo): void {
  const token = program
    .command('token')
    .description('create, list, rotate and revoke bearer tokens of the REST API (on the local store)');
  registerCreate(token, io);
  registerList(token, io);
  registerRotate(token, io);
  registerRevoke(token, io);
}
