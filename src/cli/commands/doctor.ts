import type { Command } from 'commander';
import { diagnose, doctorExitCode } from '../../service/doctor/diagnose.js';
import { countBySeverity, type Finding } from '../../service/doctor/finding.js';
import { gatherFacts } from '../../service/doctor/gather.js';
import { formatInstant } from '../../time/instant.js';
import { withSettingFlags, withStoreOptions } from '../context.js';
import { type CliIo, ExitCode, printJson } from '../io.js';
import { configOverridesFrom } from './config.js';

/** `3 errors, 1 warning, 2 info`: the counts that are not zero, worst first; `all checks passed` when none. */
function tally(findings: readonly Finding[]): string {
  const counts = countBySeverity(findings);
  const parts = [
    counts.error > 0 ? `${counts.error} error${counts.error === 1 ? '' : 's'}` : '',
    counts.warning > 0 ? `${counts.warning} warning${counts.warning === 1 ? '' : 's'}` : '',
    counts.info > 0 ? `${counts.info} info` : '',
  ].filter((p) => p !== '');
  return parts.length === 0 ? 'all checks passed' : parts.join(', ');
}

/** One finding a line (`severity  check  message`), its fix on the next, then the tally. */
function printText(findings: readonly Finding[], io: CliIo): void {
  for (const f of findings) {
    io.stdout.write(`${f.severity.padEnd(8)} ${f.check.padEnd(12)} ${f.message}\n`);
    if (f.fix !== null) io.stdout.write(`${''.padEnd(22)}fix: ${f.fix}\n`);
  }
  io.stdout.write(`${tally(findings)}\n`);
}

/**
 * `ursa doctor [--json] [--db …] [setting flags]` (issue #26 item 4): checks the configuration
 * sources, the store (reached, migrated, a SQLite file's modes), the clock against the
 * database's, a SQLite store's serving process, the workers and their leases, and overdue
 * schedulers, and prints each finding with its fix. Changes nothing. Exit 1 when a finding is an
 * error, 0 otherwise (warnings included); 2 for a usage error.
 */
export function registerDoctor(program: Command, io: CliIo): void {
  withSettingFlags(withStoreOptions(program.command('doctor')))
    .description(
      'check the configuration, the store, the clock, the workers and overdue schedulers; print each finding with its fix (exit 1 on an error)',
    )
    .option(
      '--json',
      'print JSON {ok, checkedAt, counts: {error, warning, info, ok}, findings: [{check, severity, message, fix}]}',
    )
    .action(async (options: { json?: boolean }, command: Command) => {
      const facts = await gatherFacts({
        cwd: io.cwd,
        env: io.env,
        overrides: configOverridesFrom(command.optsWithGlobals()),
        clock: io.clock,
      });
      const now = io.clock.now();
      const findings = diagnose(facts, now);
      const code = doctorExitCode(findings);
      if (options.json) {
        printJson(io, {
          ok: code === 0,
          checkedAt: formatInstant(now),
          counts: countBySeverity(findings),
          findings,
        });
      } else printText(findings, io);
      if (code !== 0) throw new ExitCode(code);
    });
}
