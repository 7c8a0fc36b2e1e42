import type { Command } from 'commander';
import { type Config, type ConfigOverrides, displayValue } from '../../config/load.js';
import { configurationReference } from '../../config/reference.js';
import { settingDefinitions, settingKeys } from '../../config/schema.js';
import type { SettingKey } from '../../config/settings.js';
import { formatDuration } from '../../time/duration.js';
import type { CliIo } from '../io.js';

/**
 * Commander option values of the configuration flags, named as commander names them (the
 * `ursa.yaml` key of each of {@link settingDefinitions}: `--misfire-threshold` →
 * `misfireThreshold`): text, or a boolean from a `--no-…` style flag. Keyed by any name, so it
 * covers every setting as it is added; properties that are no setting's key are ignored.
 */
export type ConfigFlagOptions = Readonly<Record<string, string | boolean | undefined>>;

/**
 * The {@link ConfigOverrides} in a command's options (`command.optsWithGlobals()`): each
 * configuration flag that was given, keyed by setting (`misfireThreshold` → `misfireThresholdMs`).
 * Give these options no commander default, or they always count as set by a flag.
 */
export function configOverridesFrom(options: ConfigFlagOptions): ConfigOverrides {
  const overrides: { [K in SettingKey]?: string } = {};
  for (const key of settingKeys) {
    const value = options[settingDefinitions[key].yamlKey];
    if (typeof value === 'string') overrides[key] = value;
    else if (typeof value === 'boolean') overrides[key] = String(value);
  }
  return overrides;
}

/**
 * The value column of the table: durations also as ISO-8601 (`60000 (PT1M)`), a list as its
 * entries with commas, a mapping as `VAR=a,b; VAR2=c`, an empty list, mapping or text as `none`.
 */
function formatValue(key: SettingKey, value: unknown): string {
  const { type } = settingDefinitions[key];
  if (type === 'duration' && typeof value === 'number') {
    return `${value} (${formatDuration(value)})`;
  }
  if (type === 'list' && Array.isArray(value)) return value.length === 0 ? 'none' : value.join(', ');
  if (type === 'mapping' && typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).map(
      ([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : String(v)}`,
    );
    return entries.length === 0 ? 'none' : entries.join('; ');
  }
  // An empty text (publicUrl) is unset: `none`, not a blank column.
  if (value === '') return 'none';
  return String(value);
}

function formatSource(config: Config, key: SettingKey): string {
  const note = config.notes[key];
  return note === undefined ? config.sources[key] : `${config.sources[key]} (${note})`;
}

function printTable(config: Config, io: CliIo): void {
  // Settings are shown by the names an operator writes: the ursa.yaml key and the variable.
  const rows = [
    ['setting', 'env', 'value', 'source'],
    ...settingKeys.map((key) => [
      settingDefinitions[key].yamlKey,
      settingDefinitions[key].env,
      formatValue(key, displayValue(key, config[key])),
      formatSource(config, key),
    ]),
  ];
  const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  for (const row of rows) {
    const line = row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ');
    io.stdout.write(`${line.trimEnd()}\n`);
  }
}

function printJson(config: Config, io: CliIo): void {
  const out: Record<string, { value: unknown; source: string; note?: string }> = {};
  for (const key of settingKeys) {
    const note = config.notes[key];
    out[key] = {
      value: displayValue(key, config[key]),
      source: config.sources[key],
      ...(note === undefined ? {} : { note }),
    };
  }
  io.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
}

/**
 * `ursa config [--json | --reference] [--db <path>]`: prints every operator setting (decisions §2),
 * its effective value and where it came from, as an aligned table or, with `--json`, as
 * `{ "<setting>": { "value": …, "source": "…", "note"?: "…" } }`; with `--reference`, the
 * configuration reference (Markdown, `docs/configuration.md`) without reading any configuration. Durations are milliseconds; a
 * PostgreSQL password is shown as `***`. `load` reads the configuration with the command's flags
 * as overrides; its `CONFIG_INVALID` error propagates (exit 2).
 */
export function registerConfig(
  program: Command,
  io: CliIo,
  load: (overrides: ConfigOverrides) => Config,
): void {
  program
    .command('config')
    .description('print the effective operator configuration and where each value came from')
    .option('--json', 'print a JSON object {"<setting>": {"value", "source"}}')
    .option('--reference', 'print the reference of every setting (Markdown): key, variable, flag, default')
    .option('--db <path>', 'store: a SQLite file path or a postgres:// URL (overrides ursa.yaml and URSA_DB)')
    .action((options: { json?: boolean; reference?: boolean }, command: Command) => {
      if (options.reference) {
        io.stdout.write(configurationReference());
        return;
      }
      const config = load(configOverridesFrom(command.optsWithGlobals<ConfigFlagOptions>()));
      if (options.json) printJson(config, io);
      else printTable(config, io);
    });
}
