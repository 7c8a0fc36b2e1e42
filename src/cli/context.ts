import type { Command } from 'commander';
import { compose } from '../app/compose.js';
import { configuredEngines, runtimeSettingsOf } from '../app/configured.js';
import { HttpClient } from '../client/http.js';
import { LocalClient } from '../client/local.js';
import type { UrsaClient } from '../client/types.js';
import { type Config, loadConfig } from '../config/load.js';
import { settingDefinitions, settingKeys } from '../config/schema.js';
import { UrsaError } from '../errors/index.js';
import { createLogger, type Logger } from '../log.js';
import type { Runtime } from '../runtime/context.js';
import type { Metrics } from '../runtime/metrics.js';
import type { Backoff } from '../runtime/record-retry.js';
import type { Tracer } from '../runtime/tracer.js';
import { configOverridesFrom } from './commands/config.js';
import type { CliIo } from './io.js';

/** Adds the options every store command takes (decisions §7): `--db`, `--tenant`, `--project`. */
export function withStoreOptions(command: Command): Command {
  return command
    .option(
      '--db <path>',
      'store: a SQLite file path (default ./data/ursa.db) or a postgres:// URL; or URSA_DB',
    )
    .option('--tenant <tenant>', 'tenant (default "default", or URSA_TENANT)')
    .option('--project <project>', 'project (default "demo", or URSA_PROJECT)');
}

/**
 * Every operator setting's flag (`--misfire-threshold <value>`, …) that `command` does not have
 * yet, from the setting definitions, so the flags the configuration reference lists exist on the
 * commands that run the scheduler.
 */
export function withSettingFlags(command: Command): Command {
  const taken = new Set(command.options.map((option) => option.long));
  for (const key of settingKeys) {
    const { flag, env, allowed } = settingDefinitions[key];
    if (!taken.has(flag)) command.option(`${flag} <value>`, `${allowed}; or ${env}`);
  }
  return command;
}

/** The effective configuration for a command: defaults < ursa.yaml < URSA_* < its flags. */
export function commandConfig(command: Command, io: CliIo): Config {
  return loadConfig({ cwd: io.cwd, env: io.env, overrides: configOverridesFrom(command.optsWithGlobals()) });
}

/** An open store with the runtime over it; `close()` when done. */
export interface CommandContext {
  readonly config: Config;
  readonly rt: Runtime;
  close(): Promise<void>;
}

/**
 * Opens the store named by the configuration and builds the runtime (the composition root,
 * `app/compose.ts`, with the configuration's settings and engines). `log` defaults to a
 * logger on standard error at `warn` (commands print their own results on standard output).
 */
export async function openContext(
  command: Command,
  io: CliIo,
  log?: Logger,
  options: { metrics?: Metrics; tracer?: Tracer; openRetry?: Backoff } = {},
): Promise<CommandContext> {
  const config = commandConfig(command, io);
  const { rt, close } = await compose({
    db: config.db,
    cwd: io.cwd,
    clock: io.clock,
    settings: runtimeSettingsOf(config),
    engines: configuredEngines(config),
    log: log ?? createLogger(config.logLevel === 'silent' ? 'silent' : 'warn', process.stderr),
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    ...(options.tracer === undefined ? {} : { tracer: options.tracer }),
    ...(options.openRetry === undefined ? {} : { openRetry: options.openRetry }),
  });
  return { config, rt, close };
}

/**
 * Adds the options of a command that works on a local store or against a server (issue #7 item
 * 7): the store options, and `--url` with `--token` (or `URSA_URL` / `URSA_TOKEN`).
 */
export function withClientOptions(command: Command): Command {
  return withStoreOptions(command)
    .option('--url <url>', 'work against the Ursa server at this URL instead of a store; or URSA_URL')
    .option('--token <token>', 'bearer token for --url (see ursa token create); or URSA_TOKEN');
}

/** The server a command talks to, when it does: `--url`/`--token`, else `URSA_URL`/`URSA_TOKEN`. */
export function remoteTarget(command: Command, io: CliIo): { url: string; token: string } | undefined {
  const opts = command.optsWithGlobals<{ url?: string; token?: string; db?: string }>();
  const url = opts.url ?? (io.env.URSA_URL === '' ? undefined : io.env.URSA_URL);
  if (url === undefined) return undefined;
  if (opts.url !== undefined && opts.db !== undefined) {
    throw new UrsaError(
      'ARGUMENT_INVALID',
      'url: --url and --db exclude each other: a command works on one',
      {
        field: 'url',
        value: opts.url,
        allowed: '--db <store> (local) or --url <server> with --token (remote)',
      },
    );
  }
  const token = opts.token ?? (io.env.URSA_TOKEN === '' ? undefined : io.env.URSA_TOKEN);
  if (token === undefined) {
    throw new UrsaError(
      'UNAUTHENTICATED',
      `a token is required to work against ${url}: pass --token <token> or set URSA_TOKEN`,
      { field: 'token' },
    );
  }
  return { url, token };
}

/**
 * The client a command works with: an {@link HttpClient} against the server of `--url` (or
 * `URSA_URL`), else a {@link LocalClient} on the store of `--db`. `as` is the user a local client
 * acts as (the creator of what it writes); a remote one acts as its token's user, so `as` is
 * refused there. `close()` when done.
 *
 * @throws UrsaError `ARGUMENT_INVALID` for `--url` with `--db` or `as`, or a URL that is not one;
 *   `UNAUTHENTICATED` for `--url` without a token.
 */
export async function openClient(
  command: Command,
  io: CliIo,
  options: { as?: string | undefined } = {},
): Promise<UrsaClient> {
  const remote = remoteTarget(command, io);
  if (remote !== undefined) {
    if (options.as !== undefined) {
      throw new UrsaError(
        'ARGUMENT_INVALID',
        'as: --as names the user of a local store; against a server the token says who acts',
        { field: 'as', value: options.as, allowed: 'a token of that user (ursa token create --user <user>)' },
      );
    }
    // The flags --tenant/--project are configuration overrides: the config has them, validated.
    const config = commandConfig(command, io);
    return new HttpClient({
      baseUrl: remote.url,
      token: remote.token,
      scope: { tenant: config.tenant, project: config.project },
      fetch: io.fetch,
    });
  }
  const { config, rt, close } = await openContext(command, io);
  return new LocalClient(rt, { tenant: config.tenant, project: config.project }, { user: options.as, close });
}

/**
 * Runs `use` with the command's client ({@link openClient}) and closes the client after it,
 * whatever `use` did.
 *
 * @throws what {@link openClient} or `use` throws.
 */
export async function withClient<T>(
  command: Command,
  io: CliIo,
  use: (client: UrsaClient) => Promise<T>,
  options: { as?: string | undefined } = {},
): Promise<T> {
  const client = await openClient(command, io, options);
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}
