import type { Command } from 'commander';
import { openClient, withClientOptions } from '../context.js';
import type { CliIo } from '../io.js';

/** `ursa fire <name>`: a manual fire through the scheduler's overlap policy (spec §9 `scheduler_fire`). */
function registerFire(program: Command, io: CliIo): void {
  withClientOptions(program.command('fire'))
    .description('fire a scheduler now, through its overlap policy; a running worker starts it')
    .argument('<name>', 'scheduler name')
    .option('--json', 'print JSON {correlationId, logPath}')
    .action(async (name: string, options: { json?: boolean }, command: Command) => {
      const client = await openClient(command, io);
      try {
        const fired = await client.fire(name);
        if (options.json) {
          io.stdout.write(
            `${JSON.stringify({ correlationId: fired.correlationId, logPath: fired.logPath })}\n`,
          );
          return;
        }
        io.stdout.write(`fired ${name}: ${fired.correlationId}\nrun log: ${fired.logPath}\n`);
        if ((await client.workerRunning()) === false) {
          io.stdout.write('no worker is running: the run starts when one does (ursa serve or ursa worker)\n');
        }
      } finally {
        await client.close();
      }
    });
}

/** `ursa process stop <id>`: spec §5 `processStop`, on whichever worker runs the process. */
function registerProcess(program: Command, io: CliIo): void {
  const processCommand = program.command('process').description('stop processes');
  withClientOptions(processCommand.command('stop'))
    .description('stop a process on whichever worker runs it; its run ends cancelled')
    .argument('<processId>', 'process id (proc_…)')
    .option('--reason <reason>', 'why, recorded on the process and its run', 'stopped by operator')
    .action(async (processId: string, options: { reason: string }, command: Command) => {
      const client = await openClient(command, io);
      try {
        const { stopping } = await client.processStop(processId, options.reason);
        io.stdout.write(
          stopping ? `stopping ${processId}\n` : `${processId} is not running: nothing to stop\n`,
        );
      } finally {
        await client.close();
      }
    });
}

/** Commands that act on runs and processes: fire, process stop (issue #5). */
export function registerRunCommands(program: Command, io: CliIo): void {
  registerFire(program, io);
  registerProcess(program, io);
}
