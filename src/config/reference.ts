import { formatDuration } from '../time/duration.js';
import { settingDefinitions, settingKeys } from './schema.js';
import type { SettingKey } from './settings.js';

/** A default as an operator writes it: durations as ISO-8601 (`PT1M`), everything else as is. */
function defaultText(key: SettingKey): string {
  const definition = settingDefinitions[key];
  const value = definition.default as unknown;
  if (definition.type === 'duration' && typeof value === 'number') {
    return formatDuration(value);
  }
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A table cell: Markdown's column separator escaped, line breaks folded. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll(/\s*\n\s*/g, ' ');
}

/**
 * The configuration reference (`docs/configuration.md`) as Markdown: one row per operator setting
 * of {@link settingDefinitions}, in their order, with its `ursa.yaml` key, variable, flag, default,
 * what is allowed and what it does. `ursa config --reference` prints it; a test keeps the file and
 * the definitions in sync, as the error catalogue is kept.
 */
export function configurationReference(): string {
  const rows = settingKeys.map((key) => {
    const d = settingDefinitions[key];
    // An empty default (publicUrl) is unset: "none", not an empty code span.
    const shown = defaultText(key) === '' ? 'none' : `\`${cell(defaultText(key))}\``;
    return `| \`${d.yamlKey}\` | \`${d.env}\` | \`${d.flag}\` | ${shown} | ${cell(d.allowed)} | ${cell(d.doc)} |`;
  });
  return [
    '# Configuration reference',
    '',
    'Every operator setting of Ursa. Each is read once at start, lowest precedence first: its',
    'default, the `ursa.yaml` file in the working directory, the `URSA_*` environment variable, the',
    'command-line flag. `ursa config` prints the value in force and where it came from;',
    '`ursa config --reference` prints this page.',
    '',
    '| `ursa.yaml` key | variable | flag | default | allowed | what it does |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    // Traces are OpenTelemetry's to configure (issue #26 item 3), with its standard variables.
    "Traces are configured by OpenTelemetry's standard variables, not by settings of this table:",
    '`OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_TRACES_EXPORTER`) turns them on; see',
    '[operations](operations.md#traces).',
    '',
  ].join('\n');
}
