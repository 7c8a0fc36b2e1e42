import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { UrsaError } from '../../errors/index.js';
import { refreshProject, refreshTenant } from '../../runtime/registrar.js';
import type { Caller } from '../../service/caller.js';
import { deleteScheduler, setScheduler } from '../../service/schedulers.js';
import { setSetting, unsetSetting } from '../../service/settings.js';
import { openContext, withStoreOptions } from '../context.js';
import type { CliIo } from '../io.js';
import { scope } from './store-commands.js';

/** The CLI acts as an operator: `--as <user>` (default `admin`) with the admin role (decisions §6). */
function callerOf(command: Command, fallback: { tenant: string; project: string }): Caller {
  const { tenant, project } = scope(command, fallback);
  const as = command.optsWithGlobals<{ as?: string }>().as ?? 'admin';
  return { tenant, project, user: as, role: 'admin' };
}

function registerSet(program: Command, io: CliIo): void {
  withStoreOptions(program.command('set'))
    .description(
      'create or replace a scheduler from a YAML file (fills a missing timezone with your display zone)',
    )
    .argument('<name>', 'scheduler name')
    .requiredOption('-f, --file <file>', 'the scheduler YAML')
    .option('--as <user>', 'the user writing it (its creator, the default runAs)', 'admin')
    .action(async (name: string, options: { file: string }, command: Command) => {
      let yaml: string;
      try {
        yaml = readFileSync(resolve(io.cwd, options.file), 'utf8');
      } catch {
        throw new UrsaError('ARGUMENT_INVALID', `--file: cannot read ${JSON.stringify(options.file)}`, {
          field: 'file',
          value: options.file,
        });
      }
      const { config, rt, close } = await openContext(command, io);
      try {
        const result = await setScheduler(rt, callerOf(command, config), name, yaml);
        io.stdout.write(
          `${result.created ? 'created' : 'updated'} ${result.path} (version ${result.version})\n`,
        );
        if (result.filledTimezone !== undefined)
          io.stdout.write(`timezone: ${result.filledTimezone} (your display zone, spec §10c)\n`);
        for (const warning of result.warnings) io.stderr.write(`warning: ${warning}\n`);
      } finally {
        await close();
      }
    });
}

function registerDelete(program: Command, io: CliIo): void {
  withStoreOptions(program.command('delete'))
    .description(
      'delete a scheduler: its document goes to the trash, its schedule stops, its sessions are archived',
    )
    .argument('<name>', 'scheduler name')
    .action(async (name: string, _options: unknown, command: Command) => {
      const { config, rt, close } = await openContext(command, io);
      try {
        const { trashPath } = await deleteScheduler(rt, callerOf(command, config), name);
        io.stdout.write(`deleted ${name}; restore with: ursa doc restore ${trashPath}\n`);
      } finally {
        await close();
      }
    });
}

function registerRefresh(program: Command, io: CliIo): void {
  withStoreOptions(program.command('refresh'))
    .description(
      're-read scheduler documents (spec §8): one scheduler, the project, or every project of the tenant',
    )
    .option('--name <name>', 'only this scheduler (delta refresh)')
    .option('--all-projects', 'every project of the tenant (tenant-wide refresh)')
    .action(async (options: { name?: string; allProjects?: boolean }, command: Command) => {
      const { config, rt, close } = await openContext(command, io);
      try {
        const { tenant, project } = scope(command, config);
        const results = options.allProjects
          ? await refreshTenant(rt, tenant)
          : [await refreshProject(rt, tenant, project, options.name)];
        for (const r of results) {
          const what = r.active ? `${r.registered.length} scheduler(s)` : 'not active: unloaded';
          io.stdout.write(
            `${r.tenant}/${r.project}: ${what}${r.failures.length > 0 ? `, ${r.failures.length} invalid` : ''}\n`,
          );
          for (const f of r.failures) io.stdout.write(`  ${f.message.split('\n').join('\n  ')}\n`);
        }
      } finally {
        await close();
      }
    });
}

function registerProject(program: Command, io: CliIo): void {
  const project = program
    .command('project')
    .description('project lifecycle (spec §3): pin, unpin, activate, suspend');
  const actions: Record<
    string,
    {
      description: string;
      run: (rt: Awaited<ReturnType<typeof openContext>>['rt'], t: string, p: string) => Promise<void>;
    }
  > = {
    pin: {
      description:
        'keep the project active even without scheduler documents of its own (lifecycleType PERMANENT)',
      run: async (rt, t, p) => {
        await setSetting(
          rt.repos,
          { tenant: t, scope: 'project', subject: p, key: 'lifecycleType', value: 'PERMANENT' },
          rt.clock.now(),
        );
      },
    },
    unpin: {
      description: 'let the project be active only while it holds scheduler documents of its own',
      run: async (rt, t, p) => {
        await unsetSetting(rt.repos, { tenant: t, scope: 'project', subject: p, key: 'lifecycleType' });
      },
    },
    activate: {
      description: 'lift a suspension: the project is active again if it holds schedulers or is pinned',
      run: (rt, t, p) => rt.repos.projects.setSuspended(t, p, false, rt.clock.now()),
    },
    suspend: {
      description: 'unload the project: none of its schedulers (nor the tenant ones) fire until activated',
      run: (rt, t, p) => rt.repos.projects.setSuspended(t, p, true, rt.clock.now()),
    },
  };
  for (const [name, action] of Object.entries(actions)) {
    withStoreOptions(project.command(name))
      .description(action.description)
      .action(async (_options: unknown, command: Command) => {
        const { config, rt, close } = await openContext(command, io);
        try {
          const { tenant, project: p } = scope(command, config);
          await action.run(rt, tenant, p);
          const result = await refreshProject(rt, tenant, p);
          io.stdout.write(
            `${tenant}/${p}: ${result.active ? `active, ${result.registered.length} scheduler(s)` : 'not active'}\n`,
          );
        } finally {
          await close();
        }
      });
  }
}

/** Scheduler writes and project lifecycle: set, delete, refresh, project pin|unpin|activate|suspend (issue #6). */
export function registerSchedulerCommands(program: Command, io: CliIo): void {
  registerSet(program, io);
  registerDelete(program, io);
  registerRefresh(program, io);
  registerProject(program, io);
}
