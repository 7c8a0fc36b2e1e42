import { resolve } from 'node:path';
import type { Command } from 'commander';
import { type Config, loadConfig } from '../config/load.js';
import { defaultEngines } from '../engines/index.js';
import { createLogger, type Logger } from '../log.js';
import type { Runtime } from '../runtime/context.js';
import { openStore, repositories } from '../store/index.js';
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
 * Opens the store named by the configuration and builds the runtime. `log` defaults to a
 * logger on standard error at `warn` (commands print their own results on standard output).
 */
export async function openContext(command: Command, io: CliIo, log?: Logger): Promise<CommandContext> {
  const config = commandConfig(command, io);
  const db = /^postgres(ql)?:\/\//.test(config.db) ? config.db : resolve(io.cwd, config.db);
  const store = await openStore(db);
  const rt: Runtime = {
    repos: repositories(store),
    clock: io.clock,
    settings: {
      misfireThresholdMs: config.misfireThresholdMs,
      runLogRetentionDays: config.runLogRetentionDays,
      shutdownGraceMs: config.shutdownGraceMs,
    },
    engines: defaultEngines(),
    log: log ?? createLogger(config.logLevel === 'silent' ? 'silent' : 'warn', process.stderr),
  };
  return { config, rt, close: () => store.close() };
}
