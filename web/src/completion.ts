import type { Completion, CompletionContext, CompletionResult } from '@codemirror/autocomplete';
import { FIELDS, fieldInfo, zoneNames } from './schema-info.js';

/**
 * Completion for scheduler YAML: top-level field names (from the schema, those not yet written)
 * at the start of a line, and values after `field: ` — enum values, true/false, time zones, and
 * the recipes the page knows of.
 */

const CRON_EXAMPLES: readonly Completion[] = [
  { label: '"0 0 8 * * MON-FRI"', detail: 'weekdays at 08:00' },
  { label: '"0 0 3 * * *"', detail: 'every day at 03:00' },
  { label: '"0 */15 * * * *"', detail: 'every 15 minutes' },
  { label: '"*/10 * * * * *"', detail: 'every 10 seconds' },
  { label: '"0 0 9 1 * *"', detail: 'the 1st of every month at 09:00' },
  { label: '@daily', detail: 'every day at 00:00' },
  { label: '@hourly', detail: 'every hour' },
];

export function schedulerCompletion(recipes: () => readonly string[]) {
  return (context: CompletionContext): CompletionResult | null => {
    const line = context.state.doc.lineAt(context.pos);
    const before = line.text.slice(0, context.pos - line.from);
    const key = /^([A-Za-z]*)$/.exec(before);
    if (key !== null) {
      if (!context.explicit && key[1] === '') return null;
      const written = new Set(
        context.state.doc
          .toString()
          .split('\n')
          .map((l) => /^([A-Za-z]+)\s*:/.exec(l)?.[1])
          .filter((k): k is string => k !== undefined),
      );
      const options: Completion[] = FIELDS.filter((f) => !written.has(f.name) || f.name === key[1]).map(
        (f) => ({
          label: f.name,
          type: 'property',
          detail: f.required ? 'required' : f.values.length > 0 ? f.values.join(' | ') : f.kind,
          info: f.about,
          apply: f.kind === 'mapping' || f.kind === 'list' ? `${f.name}:\n  ` : `${f.name}: `,
          boost: f.required ? 1 : 0,
        }),
      );
      return { from: line.from, options, validFor: /^[A-Za-z]*$/ };
    }
    const value = /^([A-Za-z]+):[ \t]*("?[^"#]*)$/.exec(before);
    if (value === null) return null;
    const field = fieldInfo(value[1] as string);
    if (field === undefined) return null;
    const from = context.pos - (value[2] as string).length;
    let options: Completion[] = [];
    if (field.values.length > 0) {
      options = field.values.map((v) => ({
        label: v,
        type: 'enum',
        ...(String(field.defaultValue) === v ? { detail: 'default' } : {}),
      }));
    } else if (field.name === 'timezone') {
      options = zoneNames().map((z) => ({ label: z, type: 'constant' }));
    } else if (field.name === 'recipe') {
      options = recipes().map((r) => ({ label: r, type: 'variable' }));
    } else if (field.name === 'cron') {
      options = [...CRON_EXAMPLES];
    } else {
      return null;
    }
    return { from, options, validFor: /^"?[^"#\s]*$/ };
  };
}
