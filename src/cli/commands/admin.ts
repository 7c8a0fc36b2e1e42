import type { Command } from 'commander';
import { LOCAL_DEFAULT_USER } from '../../client/local.js';
import { refreshProject } from '../../runtime/registrar.js';
import { validateName } from '../../scheduler/name.js';
import { restoreDocument } from '../../service/documents.js';
import { cliActor, type SettingRecord } from '../../service/records.js';
import {
  effectiveSetting,
  listSettings,
  SETTING_KEYS,
  setSetting,
  settingScope,
  unsetSetting,
} from '../../service/settings.js';
import { addUser, listUsers } from '../../service/users.js';
import { timeZone } from '../../time/zone.js';
import { openContext, withStoreOptions } from '../context.js';
import type { CliIo } from '../io.js';
import { scope } from './store-commands.js';

/** On the command line, `-` names the tenant itself as a subject (stored as ''). */
const TENANT_SUBJECT = '-';

/** The stored subject for a command-line one: `-` (or '') is the tenant's ''. */
function subjectOf(settingScopeName: string, subject: string): string {
  return settingScopeName === 'tenant' && subject === TENANT_SUBJECT ? '' : subject;
}

/** Rows of cells as lines, columns two spaces apart; the last column is not padded. */
function table(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows)
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  return rows.map((row) =>
    row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  '),
  );
}

const shownSubject = (record: Pick<SettingRecord, 'subject'>) =>
  record.subject === '' ? TENANT_SUBJECT : record.subject;

/** `ursa user add|list`: the users of a tenant (decisions §2). */
function registerUser(program: Command, io: CliIo): void {
  const user = program.command('user').description('add and list the users of a tenant');
  withStoreOptions(user.command('add'))
    .description('add a user to the tenant')
    .argument('<name>', 'user name (letters, digits, . _ -; starting with a letter or digit)')
    .option('--tz <zone>', "the user's display time zone (IANA), e.g. Europe/Berlin")
    .action(async (name: string, options: { tz?: string }, command: Command) => {
      validateName(name, 'user name');
      const zone = options.tz === undefined ? null : timeZone(options.tz).id;
      const { config, rt, close } = await openContext(command, io);
      try {
        const { tenant } = scope(command, config);
        await addUser(rt, tenant, name, zone);
        io.stdout.write(
          `added user ${name} to ${tenant}${zone === null ? '' : ` (display time zone ${zone})`}\n`,
        );
      } finally {
        await close();
      }
    });
  withStoreOptions(user.command('list'))
    .description('list the users of the tenant with the display time zone that applies to each')
    .option('--json', 'print a JSON array of {name, displayTimezone, effectiveTimezone, from}')
    .action(async (options: { json?: boolean }, command: Command) => {
      const { config, rt, close } = await openContext(command, io);
      try {
        const { tenant } = scope(command, config);
        const rows = await listUsers(rt, tenant);
        if (options.json) {
          io.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
          return;
        }
        if (rows.length === 0) io.stdout.write(`no users in ${tenant}\n`);
        for (const line of table(rows.map((r) => [r.name, r.effectiveTimezone, `(${r.from})`])))
          io.stdout.write(`${line}\n`);
      } finally {
        await close();
      }
    });
}

const KEYS_HELP = Object.entries(SETTING_KEYS)
  .map(([key, d]) => `  ${key} (${d.scopes.join(', ')}): ${d.allowed}`)
  .join('\n');

/** `ursa settings set|unset|get|list`: the settings of decisions §2. */
function registerSettings(program: Command, io: CliIo): void {
  const settings = program
    .command('settings')
    .description('set and read settings; subject "-" is the tenant itself')
    .addHelpText('after', `\nSettings:\n${KEYS_HELP}\n`);
  withStoreOptions(settings.command('set'))
    .description('set a setting of a user, the tenant or a project (validated)')
    .argument('<scope>', 'user | tenant | project')
    .argument('<subject>', 'the user or project name (_tenant: every project); "-" for the tenant')
    .argument('<key>', Object.keys(SETTING_KEYS).join(' | '))
    .argument('<value>', 'the value')
    .addHelpText('after', `\nSettings:\n${KEYS_HELP}\n`)
    .action(
      async (
        scopeName: string,
        subject: string,
        key: string,
        value: string,
        _o: unknown,
        command: Command,
      ) => {
        const { config, rt, close } = await openContext(command, io);
        try {
          const { tenant } = scope(command, config);
          const stored = await setSetting(
            rt,
            { tenant, scope: scopeName, subject: subjectOf(scopeName, subject), key, value },
            rt.clock.now(),
          );
          // A pin makes a project active: the schedulers that fire in it are registered now (spec §3).
          if (stored.scope === 'project' && stored.key === 'lifecycleType')
            await refreshProject(rt, tenant, stored.subject);
          io.stdout.write(`${stored.scope} ${shownSubject(stored)} ${stored.key} = ${stored.value}\n`);
        } finally {
          await close();
        }
      },
    );
  withStoreOptions(settings.command('unset'))
    .description('remove a setting, so the level below applies again')
    .argument('<scope>', 'user | tenant | project')
    .argument('<subject>', 'the user or project name; "-" for the tenant')
    .argument('<key>', Object.keys(SETTING_KEYS).join(' | '))
    .action(async (scopeName: string, subject: string, key: string, _o: unknown, command: Command) => {
      const { config, rt, close } = await openContext(command, io);
      try {
        const { tenant } = scope(command, config);
        const removed = await unsetSetting(rt, {
          tenant,
          scope: scopeName,
          subject: subjectOf(scopeName, subject),
          key,
        });
        // Unpinned, a project without scheduler documents of its own is unloaded (spec §3).
        if (removed && scopeName === 'project' && key === 'lifecycleType')
          await refreshProject(rt, tenant, subject);
        io.stdout.write(`${removed ? 'removed' : 'was not set:'} ${scopeName} ${subject} ${key}\n`);
      } finally {
        await close();
      }
    });
  withStoreOptions(settings.command('get'))
    .description(
      'print the value of a setting that applies to a subject, through its cascade, and where it came from',
    )
    .argument('<scope>', 'user | tenant | project')
    .argument('<subject>', 'the user or project name; "-" for the tenant')
    .argument('<key>', Object.keys(SETTING_KEYS).join(' | '))
    .option('--json', 'print JSON {scope, subject, key, value, from}')
    .action(
      async (
        scopeName: string,
        subject: string,
        key: string,
        options: { json?: boolean },
        command: Command,
      ) => {
        const { config, rt, close } = await openContext(command, io);
        try {
          const { tenant } = scope(command, config);
          const stored = subjectOf(scopeName, subject);
          const { value, from } = await effectiveSetting(
            rt,
            { tenant, scope: scopeName, subject: stored, key },
            rt.settings.runLogRetentionDays,
            rt.settings.budget,
          );
          io.stdout.write(
            options.json
              ? `${JSON.stringify({ scope: scopeName, subject: stored, key, value, from })}\n`
              : `${value}  (${from})\n`,
          );
        } finally {
          await close();
        }
      },
    );
  withStoreOptions(settings.command('list'))
    .description('list the stored settings of the tenant, optionally of one scope and subject')
    .argument('[scope]', 'user | tenant | project')
    .argument('[subject]', 'the user or project name; "-" for the tenant')
    .option('--json', 'print a JSON array of {scope, subject, key, value} (the tenant\'s subject is "")')
    .action(
      async (
        scopeName: string | undefined,
        subject: string | undefined,
        options: { json?: boolean },
        command: Command,
      ) => {
        const checked = scopeName === undefined ? undefined : settingScope(scopeName);
        const { config, rt, close } = await openContext(command, io);
        try {
          const { tenant } = scope(command, config);
          const records = await listSettings(
            rt,
            tenant,
            checked,
            checked === undefined || subject === undefined ? undefined : subjectOf(checked, subject),
          );
          if (options.json) {
            const rows = records.map((r) => ({
              scope: r.scope,
              subject: r.subject,
              key: r.key,
              value: r.value,
            }));
            io.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
            return;
          }
          if (records.length === 0) io.stdout.write(`no settings in ${tenant}\n`);
          for (const line of table(records.map((r) => [r.scope, shownSubject(r), r.key, r.value])))
            io.stdout.write(`${line}\n`);
        } finally {
          await close();
        }
      },
    );
}

/** `ursa doc restore <trash-path>`: puts a trashed document back (decisions §2), refreshing its schedulers. */
function registerDocRestore(program: Command, io: CliIo): void {
  const doc = program.commands.find((c) => c.name() === 'doc') ?? program.command('doc');
  withStoreOptions(doc.command('restore'))
    .description('move a document from _vance/trash/ back to where it was trashed from; prints that path')
    .argument('<trash-path>', 'its path in the trash, e.g. _vance/trash/<uuid>_heartbeat.yaml')
    .action(async (trashPath: string, _options: unknown, command: Command) => {
      const { config, rt, close } = await openContext(command, io);
      try {
        const { tenant, project } = scope(command, config);
        const restored = await restoreDocument(rt, tenant, project, trashPath, cliActor(LOCAL_DEFAULT_USER));
        io.stdout.write(`${restored}\n`);
      } finally {
        await close();
      }
    });
}

/**
 * Administration commands (issue #6): `user add|list`, `settings set|unset|get|list`, and
 * `doc restore` (added to the `doc` command of `store-commands.ts`).
 */
export function registerAdminCommands(program: Command, io: CliIo): void {
  registerUser(program, io);
  registerSettings(program, io);
  registerDocRestore(program, io);
}
