import { type SCHEDULER_FIELDS, schedulerSchema } from '../../src/scheduler/schema.js';

/**
 * What the editor knows of the scheduler document's fields, read from the server's own schema
 * (src/scheduler/schema.ts): names in schema order, whether each is required, its kind, its enum
 * values and default. Only the words a person reads (`about`) are written here.
 */

export type FieldKind = 'string' | 'boolean' | 'enum' | 'mapping' | 'list';

export interface FieldInfo {
  readonly name: string;
  readonly kind: FieldKind;
  readonly required: boolean;
  readonly values: readonly string[];
  readonly defaultValue: unknown;
  readonly about: string;
}

interface Def {
  readonly type: string;
  readonly innerType?: { readonly _zod: { readonly def: Def } };
  readonly in?: { readonly _zod: { readonly def: Def } };
  readonly entries?: Readonly<Record<string, string>>;
  readonly defaultValue?: unknown;
}

const ABOUT: Readonly<Record<(typeof SCHEDULER_FIELDS)[number], string>> = {
  description: 'What the scheduler is for (required).',
  cron: 'Six-field cron: second minute hour day-of-month month day-of-week, or a macro such as @daily. One of cron and at.',
  at: 'One-shot: an ISO-8601 date-time, read in timezone: (e.g. 2026-05-14T08:00:00). One of cron and at.',
  timezone: 'IANA time zone the cron or at is read in; UTC when missing.',
  enabled: 'false pauses the scheduler; re-enabled, it waits for its next occurrence.',
  recipe: 'The recipe a run starts (project → _tenant → built-in, e.g. noop). One of recipe and workflow.',
  workflow: 'The workflow a run starts. One of recipe and workflow.',
  params: 'Parameters merged over the recipe’s defaults.',
  initialMessage: 'The message the process starts with.',
  runAs: 'The user the process runs as; default the document’s creator.',
  overlap: 'What a run does while the previous one is still active: skip, queue or cancelPrevious.',
  lockMode: 'Agent access (full, protected or hidden): REST and this page see and edit every lock mode.',
  tags: 'Free labels for finding schedulers.',
  misfire: 'once: a schedule that fell behind runs once; skip: it does not run late.',
  catchUpWindow: 'ISO-8601 duration: skip a backlog whose newest missed occurrence is older (e.g. PT1H).',
  startAt:
    'Fire no occurrence before this date-time, read in timezone: (e.g. 2026-05-14T08:00:00). Cron only.',
  endAt:
    'Fire no occurrence after this date-time, read in timezone:; then the scheduler is finished. Cron only.',
  maxRuns:
    'Start at most this many runs (skipped ones do not count); then the scheduler is finished. Cron only.',
  jitter:
    'ISO-8601 duration: delay each fire by this scheduler’s own offset within it, to spread load (e.g. PT30S). Cron only.',
  pauseOnFailure:
    'Pause the scheduler after this many failed runs in a row (a completed run starts the count over), with a note and an inbox item. Cron only.',
  retry:
    'Try a failed run again: attempts (in all, 1-10) and backoff (the first wait, e.g. PT10S; doubled each time, never past the next occurrence). Cron only.',
};

function describe(name: string, schema: { readonly _zod: { readonly def: Def } }): FieldInfo {
  let def: Def | undefined = schema._zod.def;
  let required = true;
  let defaultValue: unknown;
  let kind: FieldKind = 'string';
  let values: string[] = [];
  while (def !== undefined) {
    if (def.type === 'optional') required = false;
    if (def.type === 'default') {
      required = false;
      defaultValue =
        typeof def.defaultValue === 'function' ? (def.defaultValue as () => unknown)() : def.defaultValue;
    }
    if (def.type === 'enum') {
      kind = 'enum';
      values = Object.values(def.entries ?? {});
      break;
    }
    if (def.type === 'boolean') {
      kind = 'boolean';
      values = ['true', 'false'];
      break;
    }
    if (def.type === 'record') {
      kind = 'mapping';
      break;
    }
    if (def.type === 'array') {
      kind = 'list';
      break;
    }
    def = def.innerType?._zod.def ?? def.in?._zod.def;
  }
  // cron/at and recipe/workflow are each optional alone and required as a pair (document.ts).
  return { name, kind, required, values, defaultValue, about: ABOUT[name as keyof typeof ABOUT] ?? '' };
}

/** Every field of the scheduler document, in the schema's order. */
export const FIELDS: readonly FieldInfo[] = Object.entries(schedulerSchema.shape).map(([name, schema]) =>
  describe(name, schema as unknown as { readonly _zod: { readonly def: Def } }),
);

export function fieldInfo(name: string): FieldInfo | undefined {
  return FIELDS.find((f) => f.name === name);
}

/** The IANA zones this browser knows, for completing `timezone:`. */
export function zoneNames(): readonly string[] {
  const intl = Intl as { supportedValuesOf?: (key: string) => string[] };
  const zones = intl.supportedValuesOf?.('timeZone') ?? [];
  return zones.includes('UTC') ? zones : ['UTC', ...zones];
}
