import { Command, CommanderError } from 'commander';
import { loadConfig } from '../config/load.js';
import { UrsaError } from '../errors/index.js';
import { registerAdminCommands } from './commands/admin.js';
import { registerConfig } from './commands/config.js';
import { registerDescribe } from './commands/describe.js';
import { registerDoctor } from './commands/doctor.js';
import { registerHistoryCommands } from './commands/history.js';
import { registerMcp } from './commands/mcp.js';
import { registerMigrate } from './commands/migrate.js';
import { registerNext } from './commands/next.js';
import { registerRecipeCommands } from './commands/recipe.js';
import { registerRunCommands } from './commands/run-commands.js';
import { registerSchedulerCommands } from './commands/scheduler-commands.js';
import { registerStoreCommands } from './commands/store-commands.js';
import { registerStoreCopyCommands } from './commands/store-copy.js';
import { registerTokenCommands } from './commands/token.js';
import { registerValidate } from './commands/validate.js';
import { registerWorkflowCommands } from './commands/workflow.js';
import { type CliIo, ExitCode } from './io.js';

/** Exit codes: 0 success, 1 unexpected failure, 2 invalid input or usage. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_INVALID = 2;

/** The `ursa` program with every command registered, writing to `io` (exported for tests that walk it). */
export function buildProgram(io: CliIo): Command {
  const program = new Command('ursa')
    .description('Ursa: a durable scheduler for agent runs')
    .exitOverride()
    // "Did you mean list?" for `ursa lst`; subcommands inherit it when they are added (issue #23).
    .showSuggestionAfterError(true)
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });
  registerNext(program, io);
  registerMcp(program, io);
  registerStoreCommands(program, io);
  registerMigrate(program, io);
  registerDoctor(program, io);
  registerValidate(program, io);
  registerStoreCopyCommands(program, io);
  registerHistoryCommands(program, io);
  registerRunCommands(program, io);
  registerSchedulerCommands(program, io);
  registerDescribe(program, io);
  registerAdminCommands(program, io);
  registerTokenCommands(program, io);
  registerWorkflowCommands(program, io);
  registerRecipeCommands(program, io);
  registerConfig(program, io, (overrides) => loadConfig({ cwd: io.cwd, env: io.env, overrides }));
  return program;
}

/** Whether `--json` was given as an option (not after `--`, where it is an argument). */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/** An error as `--json` prints it: `{code, kind, message, field?, value?, allowed?, issues?}`. */
function errorJson(error: UrsaError): Record<string, unknown> {
  return {
    ...error.toJSON(),
    kind: error.kind,
    ...(error.field === undefined || error.value === undefined ? {} : { value: error.value }),
    ...(error.allowed === undefined ? {} : { allowed: error.allowed }),
  };
}

/**
 * Runs the `ursa` command line with `argv` (without the node and script entries) and returns
 * the exit code. Never calls `process.exit`, so tests run it in-process. With `--json`, a refusal
 * is written to standard error as JSON `{error: {code, kind, message, …}}`.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    await buildProgram(io).parseAsync([...argv], { from: 'user' });
    return EXIT_OK;
  } catch (error) {
    if (error instanceof ExitCode) return error.code;
    if (error instanceof UrsaError) {
      if (wantsJson(argv)) {
        // A script that asked for JSON reads the refusal as JSON too (issue #23), on standard error.
        io.stderr.write(`${JSON.stringify({ error: errorJson(error) }, null, 2)}\n`);
        return EXIT_INVALID;
      }
      io.stderr.write(`ursa: ${error.message} [${error.code}]\n`);
      // Messages that list several problems carry their own "allowed" parts.
      if (error.allowed && !error.message.includes('allowed:'))
        io.stderr.write(`  allowed: ${error.allowed}\n`);
      return EXIT_INVALID;
    }
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? EXIT_OK : EXIT_INVALID;
    }
    io.stderr.write(`ursa: unexpected error: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_FAILURE;
  }
}
