import type { Command } from 'commander';
import { type MigrationReport, migrateStore } from '../../app/migrate.js';
import { commandConfig } from '../context.js';
import type { CliIo } from '../io.js';

function plural(count: number): string {
  return `${count} migration${count === 1 ? '' : 's'}`;
}

/** The report for people: what ran (or would run), one migration a line. */
function describe(report: MigrationReport): string {
  const where = `${report.store} (${report.dialect})`;
  if (report.pending.length === 0) return `${where} is up to date: no migration is pending.\n`;
  const names = report.pending.map((name) => `  ${name}\n`).join('');
  if (report.dryRun) {
    return `${where}: ${plural(report.pending.length)} pending, nothing changed (dry run):\n${names}`;
  }
  return `${where}: applied ${plural(report.applied.length)}:\n${report.applied.map((name) => `  ${name}\n`).join('')}`;
}

/**
 * `ursa migrate [--dry-run] [--json]` (issue #23, decisions §5): applies the store's pending
 * migrations and says which ran; `--dry-run` lists them and changes nothing. Every command that
 * opens a store migrates it too; this lets an operator see and do it first, on SQLite or PostgreSQL.
 */
export function registerMigrate(program: Command, io: CliIo): void {
  program
    .command('migrate')
    .description(
      "apply the store's pending schema migrations and list them (every other command applies them too)",
    )
    .option(
      '--db <path>',
      'store: a SQLite file path (default ./data/ursa.db) or a postgres:// URL; or URSA_DB',
    )
    .option('--dry-run', 'list the pending migrations and change nothing')
    .option('--json', 'print JSON {store, dialect, dryRun, pending: [name], applied: [name]}')
    .action(async (options: { dryRun?: boolean; json?: boolean }, command: Command) => {
      const config = commandConfig(command, io);
      const report = await migrateStore(config.db, io.cwd, { dryRun: options.dryRun === true });
      io.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : describe(report));
    });
}
