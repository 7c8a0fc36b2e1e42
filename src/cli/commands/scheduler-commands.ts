import type { Command } from 'commander';
import type { SchedulerSummary } from '../../client/types.js';
import { refreshProject } from '../../runtime/registrar.js';
import { setProjectSuspended } from '../../service/projects.js';
import { setSetting, unsetSetting } from '../../service/settings.js';
import { openClient, openContext, withClient, withClientOptions, withStoreOptions } from '../context.js';
import type { CliIo } from '../io.js';
import { table } from '../table.js';
import { readYamlInput } from '../yaml-input.js';
import { finishedLine, firedLines, overdueLine, pauseLine } from './scheduler-lines.js';
import { scope } from './store-commands.js';

/** A last run in one word: its outcome once it ended or was skipped, else its state (`running`…). */
function lastRunWord(run: NonNullable<SchedulerSummary['lastRun']>): string {
  return run.outcome === 'pending' ? run.state : run.outcome;
}

/** `ursa list`: one line per scheduler of the project (spec §10 list), with a header. */
function listLines(schedulers: readonly SchedulerSummary[]): string[] {
  return table([
    ['NAME', 'SCHEDULE', 'TIMEZONE', 'ENABLED', 'NEXT RUN', 'LAST RUN'],
    ...schedulers.map((s) => [
      s.name,
      s.cron !== null ? `cron ${s.cron}` : `at ${s.at ?? ''}`,
      s.timezone,
      s.bounds?.finished ? 'finished' : s.enabled ? 'yes' : s.paused === null ? 'no' : 'paused',
      s.nextRunAt ?? '-',
      s.lastRun === null ? '-' : `${lastRunWord(s.lastRun)} (${s.lastRun.at})`,
    ]),
  ]);
}

function registerList(program: Command, io: CliIo): void {
  withClientOptions(program.command('list'))
    .description(
      "list the project's schedulers (its own and _tenant's): schedule, time zone, enabled, next run, last run",
    )
    .option(
      '--all',
      'also list the one-shots that fired (they leave the list; their documents are in the trash)',
    )
    .option(
      '--json',
      'print JSON {schedulers: [...], invalid: [{path, message}]} as the REST API does (overdue: true for a next run in the past while no worker runs)',
    )
    .action((options: { all?: boolean; json?: boolean }, command: Command) =>
      withClient(command, io, async (client) => {
        const { tenant, project } = client.scope;
        // Fired one-shots are asked for always: without --all, a line says they are there.
        const { fired, ...list } = await client.listSchedulers({ all: true });
        if (options.json) {
          io.stdout.write(`${JSON.stringify(options.all ? { ...list, fired } : list, null, 2)}\n`);
          return;
        }
        if (list.schedulers.length === 0) io.stdout.write(`no schedulers in ${tenant}/${project}\n`);
        else for (const line of listLines(list.schedulers)) io.stdout.write(`${line}\n`);
        for (const { name, paused, bounds, overdue, nextRunAt } of list.schedulers) {
          if (paused !== null) io.stdout.write(`${name}: ${pauseLine(paused)}\n`);
          if (bounds?.finished) io.stdout.write(`${name}: ${finishedLine(bounds)}\n`);
          if (overdue) io.stdout.write(`${name}: ${overdueLine(nextRunAt)}\n`);
        }
        for (const invalid of list.invalid)
          io.stdout.write(`invalid: ${invalid.message.split('\n').join('\n  ')}\n`);
        if (options.all) for (const line of firedLines(fired ?? [])) io.stdout.write(`${line}\n`);
        else if (fired !== undefined && fired.length > 0)
          io.stdout.write(
            `${fired.length === 1 ? '1 one-shot' : `${fired.length} one-shots`} fired and left the list: ursa list --all shows ${fired.length === 1 ? 'it' : 'them'}\n`,
          );
      }),
    );
}

function registerGet(program: Command, io: CliIo): void {
  withClientOptions(program.command('get'))
    .description("print a scheduler's YAML document (the project's, else _tenant's)")
    .argument('<name>', 'scheduler name')
    .option(
      '--json',
      'print JSON {name, path, source, version, yaml, createdBy, updatedAt, nextRunAt, paused}',
    )
    .action((name: string, options: { json?: boolean }, command: Command) =>
      withClient(command, io, async (client) => {
        const detail = await client.getScheduler(name);
        if (options.json) {
          io.stdout.write(`${JSON.stringify(detail, null, 2)}\n`);
          return;
        }
        io.stdout.write(detail.yaml.endsWith('\n') ? detail.yaml : `${detail.yaml}\n`);
        // Beside the document, not in it: the note is not part of the YAML.
        if (detail.paused !== null) io.stderr.write(`${pauseLine(detail.paused)}\n`);
      }),
    );
}

function registerSet(program: Command, io: CliIo): void {
  withClientOptions(program.command('set'))
    .description(
      'create or replace a scheduler from a YAML file (fills a missing timezone with your display zone)',
    )
    .argument('<name>', 'scheduler name')
    .requiredOption('-f, --file <file>', 'the scheduler YAML; - reads it from standard input')
    .option(
      '--as <user>',
      'the user writing it (its creator, the default runAs); default admin; not with --url',
    )
    .action(async (name: string, options: { file: string; as?: string }, command: Command) => {
      const yaml = await readYamlInput(io, options.file);
      const client = await openClient(command, io, { as: options.as });
      try {
        const result = await client.setScheduler(name, yaml);
        io.stdout.write(
          `${result.created ? 'created' : 'updated'} ${result.path} (version ${result.version})\n`,
        );
        if (result.filledTimezone !== null)
          io.stdout.write(`timezone: ${result.filledTimezone} (your display zone)\n`);
        for (const warning of result.warnings) io.stderr.write(`warning: ${warning}\n`);
      } finally {
        await client.close();
      }
    });
}

function registerDelete(program: Command, io: CliIo): void {
  withClientOptions(program.command('delete'))
    .description(
      'delete a scheduler: its document goes to the trash, its schedule stops, its sessions are archived',
    )
    .argument('<name>', 'scheduler name')
    .option('--as <user>', 'the user deleting it; default admin; not with --url')
    .action((name: string, options: { as?: string }, command: Command) =>
      withClient(
        command,
        io,
        async (client) => {
          const { trashPath } = await client.deleteScheduler(name);
          io.stdout.write(`deleted ${name}; restore with: ursa doc restore ${trashPath}\n`);
        },
        { as: options.as },
      ),
    );
}

function registerPause(program: Command, io: CliIo): void {
  withClientOptions(program.command('pause'))
    .description(
      'pause a scheduler (its document gets enabled: false) with a note list and get show; what falls due meanwhile is not run, and a fire is refused',
    )
    .argument('<name>', 'scheduler name')
    .option('--note <text>', 'why, one line, shown with the scheduler until it is resumed', '')
    .option('--as <user>', 'the user pausing it; default admin; not with --url')
    .action((name: string, options: { note: string; as?: string }, command: Command) =>
      withClient(
        command,
        io,
        async (client) => {
          const result = await client.pause(name, options.note);
          io.stdout.write(
            `${name}: ${result.paused === null ? 'paused' : pauseLine(result.paused)} (version ${result.version})\n`,
          );
        },
        { as: options.as },
      ),
    );
  withClientOptions(program.command('resume'))
    .description(
      'resume a paused scheduler (its document gets enabled: true): it fires from its next occurrence on, and what fell in the pause is not run',
    )
    .argument('<name>', 'scheduler name')
    .option('--as <user>', 'the user resuming it; default admin; not with --url')
    .action((name: string, options: { as?: string }, command: Command) =>
      withClient(
        command,
        io,
        async (client) => {
          const result = await client.resume(name);
          io.stdout.write(`${name}: resumed (version ${result.version})\n`);
        },
        { as: options.as },
      ),
    );
}

function registerRefresh(program: Command, io: CliIo): void {
  withClientOptions(program.command('refresh'))
    .description('re-read scheduler documents: one scheduler, the project, or every project of the tenant')
    .option('--name <name>', 'only this scheduler (delta refresh; with --url the whole project)')
    .option('--all-projects', 'every project of the tenant (tenant-wide refresh)')
    .action((options: { name?: string; allProjects?: boolean }, command: Command) =>
      withClient(command, io, async (client) => {
        const results = await client.refresh({
          name: options.name,
          allProjects: options.allProjects === true,
        });
        for (const r of results) {
          const what = r.active ? `${r.registered.length} scheduler(s)` : 'not active: unloaded';
          io.stdout.write(
            `${r.tenant}/${r.project}: ${what}${r.invalid.length > 0 ? `, ${r.invalid.length} invalid` : ''}\n`,
          );
          for (const f of r.invalid) io.stdout.write(`  ${f.message.split('\n').join('\n  ')}\n`);
        }
      }),
    );
}

function registerProject(program: Command, io: CliIo): void {
  const project = program.command('project').description('project lifecycle: pin, unpin, activate, suspend');
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
          rt,
          { tenant: t, scope: 'project', subject: p, key: 'lifecycleType', value: 'PERMANENT' },
          rt.clock.now(),
        );
      },
    },
    unpin: {
      description: 'let the project be active only while it holds scheduler documents of its own',
      run: async (rt, t, p) => {
        await unsetSetting(rt, { tenant: t, scope: 'project', subject: p, key: 'lifecycleType' });
      },
    },
    activate: {
      description: 'lift a suspension: the project is active again if it holds schedulers or is pinned',
      run: (rt, t, p) => setProjectSuspended(rt, t, p, false),
    },
    suspend: {
      description: 'unload the project: none of its schedulers (nor the tenant ones) fire until activated',
      run: (rt, t, p) => setProjectSuspended(rt, t, p, true),
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

/**
 * Schedulers and project lifecycle: list, get, set, delete, pause, resume, refresh (on a store or a
 * server), project
 * pin|unpin|activate|suspend (on a store).
 */
export function registerSchedulerCommands(program: Command, io: CliIo): void {
  registerList(program, io);
  registerGet(program, io);
  registerSet(program, io);
  registerDelete(program, io);
  registerPause(program, io);
  registerRefresh(program, io);
  registerProject(program, io);
}
