import type { Command } from 'commander';
import { fireScheduler, stopProcess } from '../../service/runs.js';
import { openContext, withStoreOptions } from '../context.js';
import type { CliIo } from '../io.js';
import { scope } from './store-commands.js';

/** `ursa fire <name>`: a manual fire through the scheduler's overlap policy (spec §9 `scheduler_fire`). */
function registerFire(program: Command, io: CliIo): void {
  withStoreOptions(program.command('fire'))
    .description('fire a scheduler now, through its overlap policy (spec §9); a running worker starts it')
    .argument('<name>', 'scheduler name')
    .option('--json', 'print JSON {correlationId, logPath}')
    .action(async (name: string, options: { json?: boolean }, command: Command) => {
      const { config, rt, close } = await openContext(command, io);
      try {
        const { tenant, project } = scope(command, config);
        const fired = await fireScheduler(rt, tenant, project, name);
        if (options.json) {
          io.stdout.write(`${JSON.stringify(fired)}\n`);
          return;
        }
        io.stdout.write(`fired ${name}: ${fired.correlationId}\nrun log: ${fired.logPath}\n`);
        if ((await rt.repos.workers.live(rt.clock.now(), 5_000)).length === 0) {
          io.stdout.write('no worker is running: the run starts when one does (ursa serve or ursa worker)\n');
        }
      } finally {
        await close();
      }
    });
}

/** `ursa process stop <id>`: spec §5 `processStop`, on whichever worker runs the process. */
function registerProcess(program: Command, io: CliIo): void {
  const processCommand = program.command('process').description('stop processes');
  withStoreOptions(processCommand.command('stop'))
    .description('stop a process on whichever worker runs it; its run ends cancelled')
    .argument('<processId>', 'process id (proc_…)')
    .option('--reason <reason>', 'why, recorded on the process and its run', 'stopped by operator')
    .action(async (processId: string, options: { reason: string }, command: Command) => {
      const { config, rt, close } = await openContext(command, io);
      try {
        const { tenant } = scope(command, config);
        const { stopping } = await stopProcess(rt, tenant, processId, options.reason);
        io.stdout.write(
          stopping ? `stopping ${processId}\n` : `${processId} is not running: nothing to stop\n`,
        );
      } finally {
        await close();
      }
    });
}

/** Commands that act on runs and processes: fire, process stop (issue #5). */
export function registerRunCommands(program: Command, io: CliIo): void {
  registerFire(program, io);
  registerProcess(program, io);
}
