import type { Fetch } from '../client/http.js';
import type { Clock } from '../time/clock.js';

/**
 * Everything a CLI command touches outside itself, injected so tests run commands in-process
 * with captured output, a given stdin and a fixed clock.
 */
export interface CliIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  /** Standard input, line by line. */
  readonly stdin: () => AsyncIterable<string>;
  readonly clock: Clock;
  /** Environment variables (`URSA_*` settings). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Working directory (where `ursa.yaml` is looked for, and relative paths start). */
  readonly cwd: string;
  /** How `--url` mode sends requests; the global `fetch` when absent. */
  readonly fetch?: Fetch;
}

/** Thrown by a command to end with an exit code after it has printed what it had to say. */
export class ExitCode extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** Prints `value` as indented JSON and a newline: what every `--json` of a command writes. */
export function printJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
