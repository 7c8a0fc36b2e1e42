import { runCli } from '../../src/cli/program.js';
import { fixedClock } from '../../src/time/clock.js';

/** What an in-process `ursa` run printed and returned. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `ursa <args>` in-process with captured output, a fixed clock, and `cwd` as working directory. */
export async function ursa(
  args: string[],
  options: { cwd?: string; now?: string; stdin?: string[]; env?: Record<string, string> } = {},
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const lines = options.stdin ?? [];
  const code = await runCli(args, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    stdin: async function* () {
      yield* lines;
    },
    clock: fixedClock(Date.parse(options.now ?? '2026-03-28T12:00:00Z')),
    env: options.env ?? {},
    cwd: options.cwd ?? process.cwd(),
  });
  return { code, stdout, stderr };
}
