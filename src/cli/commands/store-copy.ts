import type { Command } from 'commander';
import { storeLocation } from '../../app/compose.js';
import {
  backupStore,
  type CopyResult,
  copyMismatch,
  copyStores,
  restoreStore,
} from '../../service/store-copy.js';
import { commandConfig, openContext, withStoreOptions } from '../context.js';
import type { CliIo } from '../io.js';

/** Prints a copy's summary: a table (or `--json`), one line a table, and the verdict. */
function printCopy(result: CopyResult, io: CliIo, json: boolean): void {
  if (json) {
    io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } else {
    io.stdout.write(`copied ${result.from} → ${result.to}\n`);
    const width = Math.max(...result.tables.map((t) => t.table.length), 5);
    io.stdout.write(`${'table'.padEnd(width)}  ${'rows'.padStart(9)}  checksum          verified\n`);
    for (const t of result.tables) {
      io.stdout.write(
        `${t.table.padEnd(width)}  ${String(t.targetRows).padStart(9)}  ${t.targetChecksum.slice(0, 16)}  ${t.equal ? 'ok' : `DIFFERS (source ${t.sourceRows} rows, ${t.sourceChecksum.slice(0, 16)})`}\n`,
      );
    }
  }
  if (!result.verified) throw copyMismatch(result);
  if (!json) io.stdout.write('verified: every table has the same rows and checksum as the source\n');
}

/** The target of a copy or restore, as `--db` names stores: a path from `cwd`, or a URL. */
const location = (value: string, io: CliIo) => storeLocation(value, io.cwd);

/** `ursa store copy --from --to`: moves a whole store between SQLite and PostgreSQL (either way). */
function registerCopy(program: Command, io: CliIo): void {
  const store = program.command('store').description('move whole stores between SQLite and PostgreSQL');
  store
    .command('copy')
    .description(
      'copy every table of a store into another (SQLite file or postgres:// URL, either way) from a consistent snapshot, then verify counts and checksums; the source is never changed',
    )
    .requiredOption('--from <store>', 'the source: a SQLite file path or a postgres:// URL')
    .requiredOption(
      '--to <store>',
      'the target: a SQLite file path or a postgres:// URL (created and migrated)',
    )
    .option('--force', 'replace the contents of a target that holds data (never a merge)')
    .option('--live', 'copy a source whose workers are running (its runs in flight are reaped on the target)')
    .option('--json', 'print the summary as JSON')
    .action(
      async (options: { from: string; to: string; force?: boolean; live?: boolean; json?: boolean }) => {
        const result = await copyStores(location(options.from, io), location(options.to, io), {
          force: options.force === true,
          live: options.live === true,
          now: io.clock.now(),
        });
        printCopy(result, io, options.json === true);
      },
    );
}

/** `ursa backup <file>`: an online backup of a SQLite store beside a running server. */
function registerBackup(program: Command, io: CliIo): void {
  withStoreOptions(program.command('backup'))
    .description(
      'write an online, consistent backup of a SQLite store into a new file (a server may run on it)',
    )
    .argument('<file>', 'the backup file to create')
    .action(async (file: string, _options: unknown, command: Command) => {
      const { rt, close } = await openContext(command, io);
      try {
        io.stdout.write(`backed up to ${await backupStore(rt, file, io.cwd)}\n`);
      } finally {
        await close();
      }
    });
}

/** `ursa restore <file>`: a backup into an empty store (`--db`). */
function registerRestore(program: Command, io: CliIo): void {
  withStoreOptions(program.command('restore'))
    .description(
      'restore a backup file into an empty store (--db: SQLite file or postgres:// URL), then verify it',
    )
    .argument('<file>', 'a backup written by ursa backup')
    .option('--force', 'replace the contents of a store that holds data')
    .option('--json', 'print the summary as JSON')
    .action(async (file: string, options: { force?: boolean; json?: boolean }, command: Command) => {
      const target = location(commandConfig(command, io).db, io);
      const result = await restoreStore(location(file, io), target, {
        force: options.force === true,
        now: io.clock.now(),
      });
      printCopy(result, io, options.json === true);
    });
}

/** The commands that move whole stores (issue #26): `store copy`, `backup`, `restore`. */
export function registerStoreCopyCommands(program: Command, io: CliIo): void {
  registerCopy(program, io);
  registerBackup(program, io);
  registerRestore(program, io);
}
