import { type Command, Option } from 'commander';
import type { RunDetail, UrsaClient } from '../../client/types.js';
import { fireStory, judged } from '../../contract/fire-story.js';
import { FIRE_AS_WRITTEN } from '../../contract/index.js';
import { UrsaError } from '../../errors/index.js';
import { parseSeconds } from '../arguments.js';
import { withClient, withClientOptions } from '../context.js';
import type { CliIo } from '../io.js';

/** `ursa fire <name>`: a manual fire through the scheduler's overlap policy (spec §9 `scheduler_fire`). */
function registerFire(program: Command, io: CliIo): void {
  withClientOptions(program.command('fire'))
    .description(
      'fire a scheduler now, through its overlap policy, and say what happened: started, waiting behind the active run, folded into the waiting one, or skipped',
    )
    .argument('<name>', 'scheduler name')
    .option('--wait <seconds>', "how long to wait for the worker's decision (0-60; 0: do not wait)", '5')
    .option('--json', 'print JSON {correlationId, logPath, state, outcome, waitingBehind, foldedInto}')
    // Taken only to be refused with the reason: a fire runs the scheduler as written (spec §11).
    .addOption(new Option('--param <key=value...>').hideHelp())
    .action((name: string, options: { wait: string; json?: boolean; param?: string[] }, command: Command) => {
      if (options.param !== undefined) {
        throw new UrsaError('ARGUMENT_INVALID', `--param: ${FIRE_AS_WRITTEN}`, {
          field: '--param',
          value: options.param.join(' '),
        });
      }
      return withClient(command, io, async (client) => {
        const waitMs = parseSeconds(options.wait, 'wait', 60) * 1000;
        const fired = await client.fire(name);
        const worker = await client.workerRunning();
        const run = await decided(client, fired.correlationId, worker === false ? 0 : waitMs);
        if (options.json) {
          const { correlationId, logPath, state, outcome, waitingBehind, foldedInto } = run;
          io.stdout.write(
            `${JSON.stringify({ correlationId, logPath, state, outcome, waitingBehind, foldedInto })}\n`,
          );
          return;
        }
        io.stdout.write(`${fireStory(name, run)}\nrun log: ${fired.logPath}\n`);
        if (!judged(run)) await noWorkerHint(client, io, 'the run starts');
      });
    });
}

/** The fired run once its lane judged it, or as it stands after `waitMs` (wall-clock ms; 0: at once). */
async function decided(client: UrsaClient, correlationId: string, waitMs: number): Promise<RunDetail> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const run = await client.run(correlationId);
    if (judged(run) || Date.now() >= deadline) return run;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** `ursa backfill <name> --from --to`: the past occurrences of a range that have no run. */
function registerBackfill(program: Command, io: CliIo): void {
  withClientOptions(program.command('backfill'))
    .description(
      'run the past occurrences of a cron scheduler that have no run yet, oldest first, one after another (at most 1,000); asked twice, each runs once',
    )
    .argument('<name>', 'scheduler name')
    .requiredOption(
      '--from <date-time>',
      'the oldest occurrence, e.g. 2026-05-14T00:00:00Z (local: read in its timezone)',
    )
    .requiredOption('--to <date-time>', 'the newest occurrence, not later than now')
    .option('--json', 'print the JSON the REST API answers')
    .action((name: string, options: { from: string; to: string; json?: boolean }, command: Command) =>
      withClient(command, io, async (client) => {
        const result = await client.backfill(name, options.from, options.to);
        if (options.json) {
          io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
          return;
        }
        const had =
          result.existing === 0 ? '' : `; ${result.existing} had a run already and are left as they are`;
        io.stdout.write(
          `backfill of ${name} from ${result.from} to ${result.to}: ${result.occurrences} occurrences, ${result.queued} queued${had}\n`,
        );
        if (result.first !== null)
          io.stdout.write(
            `they run oldest first, one after another; the first: ${result.first.correlationId}\n`,
          );
        if (result.queued > 0) await noWorkerHint(client, io, 'they start');
      }),
    );
}

// A run waits for a worker: say so when none runs.
async function noWorkerHint(client: UrsaClient, io: CliIo, what: string): Promise<void> {
  if ((await client.workerRunning()) === false)
    io.stdout.write(`no worker is running: ${what} when one does (ursa serve or ursa worker)\n`);
}

/** `ursa process stop <id>`: spec §5 `processStop`, on whichever worker runs the process. */
function registerProcess(program: Command, io: CliIo): void {
  const processCommand = program.command('process').description('stop processes');
  withClientOptions(processCommand.command('stop'))
    .description('stop a process on whichever worker runs it; its run ends cancelled')
    .argument('<processId>', 'process id (proc_…)')
    .option('--reason <reason>', 'why, recorded on the process and its run', 'stopped by operator')
    .action((processId: string, options: { reason: string }, command: Command) =>
      withClient(command, io, async (client) => {
        const { stopping } = await client.processStop(processId, options.reason);
        io.stdout.write(
          stopping ? `stopping ${processId}\n` : `${processId} is not running: nothing to stop\n`,
        );
      }),
    );
}

/** Commands that act on runs and processes: fire, process stop (issue #5). */
export function registerRunCommands(program: Command, io: CliIo): void {
  registerFire(program, io);
  registerBackfill(program, io);
  registerProcess(program, io);
}
