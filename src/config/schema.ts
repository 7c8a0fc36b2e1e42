import * as z from 'zod';
import { LogLevel, type SettingKey, type Settings } from './settings.js';
import { DEFAULT_TEMPLATE_LIMITS, type TemplateLimits } from './template-limits.js';
import {
  dbSchema,
  durationSchema,
  hostSchema,
  integerSchema,
  logLevelSchema,
  nameSchema,
  OUTBOUND_LIST,
  publicUrlSchema,
  redactDb,
  secretHostsMap,
  secretHostsText,
} from './value-schemas.js';

/**
 * Operator settings (decisions §2, §4, §5): one definition per setting with its default, where it
 * may be set (`ursa.yaml` key, `URSA_*` variable, command-line flag), what is allowed and one line of
 * documentation. `load.ts` reads the sources; this module only says what each value may be. The
 * {@link Settings} type is in `settings.ts`, the schemas of each kind of value in `value-schemas.ts`.
 */

const DURATION_ALLOWED_UNITS = 'weeks, days (24 h), hours, minutes and seconds';

/** What the value of a setting may be; a label for documentation and `ursa config`. */
export type SettingType = 'string' | 'integer' | 'boolean' | 'duration' | 'enum' | 'list' | 'mapping';

/**
 * How one setting is defined.
 *
 * - `yamlKey`: the key in `ursa.yaml`; it is also the commander option name of the flag
 *   (`--misfire-threshold` → `misfireThreshold`).
 * - `flag`: the command-line flag that overrides it, with its dashes.
 * - `fromYaml` validates a value as YAML typed it (a number for `port`, `true`/`false` for
 *   `workflows`); `fromText` validates the text of an environment variable or a flag. Issue
 *   messages are phrases that follow the quoted value ("is not a whole number").
 * - `clamp`, when present, runs after validation and may replace a valid value with the one in
 *   force, returning a note that says so (the run-log retention cap of spec §9a).
 */
export interface SettingDefinition<T> {
  readonly default: T;
  readonly type: SettingType;
  readonly env: `URSA_${string}`;
  readonly yamlKey: string;
  readonly flag: `--${string}`;
  /** What is allowed, for error messages: "an integer 1-65535". */
  readonly allowed: string;
  /** One line of documentation for operators (`ursa config --reference`): what the setting does, in their words; no spec or issue citations. */
  readonly doc: string;
  readonly fromYaml: z.ZodType<T>;
  readonly fromText: z.ZodType<T>;
  readonly clamp?: (value: T) => { value: T; note: string } | undefined;
  /** The value as it may be shown (a URL without its password); defaults to the value itself. */
  readonly display?: (value: T) => T;
}

/** The largest run budget of a window (runs), at every level of its cascade. */
export const MAX_BUDGET_RUNS = 1_000_000;

/** The largest run-log retention, in days (spec §9a). */
export const MAX_RETENTION_DAYS = 365;

/** A count of at least 1 (template limits): up to 2^31, far beyond any sensible value. */
const positive = integerSchema(1, 2 ** 31);

const retention = integerSchema(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
const budget = integerSchema(0, MAX_BUDGET_RUNS);
const port = integerSchema(1, 65535);

/**
 * Every operator setting, in the order `ursa config` prints them. Sources, lowest precedence
 * first: `default`, `ursa.yaml`, `URSA_*` environment variables, command-line flags.
 */
export const settingDefinitions: { readonly [K in SettingKey]: SettingDefinition<Settings[K]> } = {
  db: {
    default: './data/ursa.db',
    type: 'string',
    env: 'URSA_DB',
    yamlKey: 'db',
    flag: '--db',
    allowed: 'a SQLite file path or a postgres:// or postgresql:// URL',
    doc: 'Store: a SQLite file path (embedded, one process) or a PostgreSQL URL (several workers).',
    fromYaml: dbSchema,
    fromText: dbSchema,
    display: redactDb,
  },
  logLevel: {
    default: 'info',
    type: 'enum',
    env: 'URSA_LOG_LEVEL',
    yamlKey: 'logLevel',
    flag: '--log-level',
    allowed: Object.values(LogLevel).join(', '),
    doc: 'Least severe level written to the log.',
    fromYaml: logLevelSchema,
    fromText: logLevelSchema,
  },
  misfireThresholdMs: {
    default: 60_000,
    type: 'duration',
    env: 'URSA_MISFIRE_THRESHOLD',
    yamlKey: 'misfireThreshold',
    flag: '--misfire-threshold',
    allowed: `an ISO-8601 duration greater than zero in ${DURATION_ALLOWED_UNITS}, e.g. PT60S`,
    doc: 'With `misfire: skip`, a due instant older than this is not run.',
    fromYaml: durationSchema(1),
    fromText: durationSchema(1),
  },
  runLogRetentionDays: {
    default: 7,
    type: 'integer',
    env: 'URSA_RUN_LOG_RETENTION_DAYS',
    yamlKey: 'runLogRetentionDays',
    flag: '--run-log-retention-days',
    allowed: `a whole number: 1-${MAX_RETENTION_DAYS} days (more is clamped), 0 forever, negative for no run logs`,
    doc: 'Fallback of scheduler.log.retentionDays: days a run-log document is kept; 0 forever, < 0 none.',
    ...retention,
    clamp: (days) =>
      days > MAX_RETENTION_DAYS
        ? { value: MAX_RETENTION_DAYS, note: `clamped from ${days} to ${MAX_RETENTION_DAYS}` }
        : undefined,
  },
  budgetRunsPerHour: {
    default: 0,
    type: 'integer',
    env: 'URSA_BUDGET_RUNS_PER_HOUR',
    yamlKey: 'budgetRunsPerHour',
    flag: '--budget-runs-per-hour',
    allowed: `a whole number 0-${MAX_BUDGET_RUNS} (0: no budget)`,
    doc: 'Fallback of scheduler.budget.runsPerHour: runs a project may start in any rolling hour; 0 for no limit.',
    ...budget,
  },
  budgetRunsPerDay: {
    default: 0,
    type: 'integer',
    env: 'URSA_BUDGET_RUNS_PER_DAY',
    yamlKey: 'budgetRunsPerDay',
    flag: '--budget-runs-per-day',
    allowed: `a whole number 0-${MAX_BUDGET_RUNS} (0: no budget)`,
    doc: 'Fallback of scheduler.budget.runsPerDay: runs a project may start in any rolling 24 hours; 0 for no limit.',
    ...budget,
  },
  shutdownGraceMs: {
    default: 30_000,
    type: 'duration',
    env: 'URSA_SHUTDOWN_GRACE',
    yamlKey: 'shutdownGrace',
    flag: '--shutdown-grace',
    allowed: `an ISO-8601 duration of zero or more in ${DURATION_ALLOWED_UNITS}, e.g. PT30S`,
    doc: 'How long a stopping worker waits for running processes before it ends.',
    fromYaml: durationSchema(0),
    fromText: durationSchema(0),
  },
  workflows: {
    default: true,
    type: 'boolean',
    env: 'URSA_WORKFLOWS',
    yamlKey: 'workflows',
    flag: '--workflows',
    allowed: 'true or false (1 or 0 in the environment or a flag)',
    doc: 'Whether schedulers may start workflow runs.',
    fromYaml: z.boolean({ error: 'is not true or false' }),
    fromText: z
      .enum(['true', 'false', '1', '0'], { error: 'is not true, false, 1 or 0' })
      .transform((v) => v === 'true' || v === '1'),
  },
  templateParseLimit: {
    default: DEFAULT_TEMPLATE_LIMITS.parseChars,
    type: 'integer',
    env: 'URSA_TEMPLATE_PARSE_LIMIT',
    yamlKey: 'templateParseLimit',
    flag: '--template-parse-limit',
    allowed: 'a whole number of characters, at least 1',
    doc: 'Longest workflow template (one param string), in characters; a longer one is refused when written.',
    ...positive,
  },
  templateRenderLimitMs: {
    default: DEFAULT_TEMPLATE_LIMITS.renderMs,
    type: 'duration',
    env: 'URSA_TEMPLATE_RENDER_LIMIT',
    yamlKey: 'templateRenderLimit',
    flag: '--template-render-limit',
    allowed: `an ISO-8601 duration of at least 1 ms in ${DURATION_ALLOWED_UNITS}, e.g. PT0.02S`,
    doc: "Time one workflow step's templates may take to render, together; past it the step fails.",
    fromYaml: durationSchema(1),
    fromText: durationSchema(1),
  },
  templateMemoryLimit: {
    default: DEFAULT_TEMPLATE_LIMITS.memoryUnits,
    type: 'integer',
    env: 'URSA_TEMPLATE_MEMORY_LIMIT',
    yamlKey: 'templateMemoryLimit',
    flag: '--template-memory-limit',
    allowed: 'a whole number of characters and list elements, at least 1',
    doc: "Characters and list elements one workflow step's templates may allocate, together; past it the step fails.",
    ...positive,
  },
  templateListLimit: {
    default: DEFAULT_TEMPLATE_LIMITS.listElements,
    type: 'integer',
    env: 'URSA_TEMPLATE_LIST_LIMIT',
    yamlKey: 'templateListLimit',
    flag: '--template-list-limit',
    allowed: 'a whole number of elements, at least 1',
    doc: 'Longest list a workflow template filter may be given; a longer one fails the step.',
    ...positive,
  },
  templateParamLimit: {
    default: DEFAULT_TEMPLATE_LIMITS.paramBytes,
    type: 'integer',
    env: 'URSA_TEMPLATE_PARAM_LIMIT',
    yamlKey: 'templateParamLimit',
    flag: '--template-param-limit',
    allowed: 'a whole number of bytes, at least 1',
    doc: 'Largest rendered workflow param, in bytes of UTF-8; a larger one fails the step.',
    ...positive,
  },
  templateRunLimit: {
    default: DEFAULT_TEMPLATE_LIMITS.runBytes,
    type: 'integer',
    env: 'URSA_TEMPLATE_RUN_LIMIT',
    yamlKey: 'templateRunLimit',
    flag: '--template-run-limit',
    allowed: 'a whole number of bytes, at least 1',
    doc: "Largest sum of one workflow run's rendered params over its steps, in bytes of UTF-8; past it the step fails.",
    ...positive,
  },
  host: {
    default: '127.0.0.1',
    type: 'string',
    env: 'URSA_HOST',
    yamlKey: 'host',
    flag: '--host',
    allowed: 'a host name or IP address',
    doc: 'Address the HTTP server listens on.',
    fromYaml: hostSchema,
    fromText: hostSchema,
  },
  port: {
    default: 8080,
    type: 'integer',
    env: 'URSA_PORT',
    yamlKey: 'port',
    flag: '--port',
    allowed: 'an integer 1-65535',
    doc: 'Port the HTTP server listens on.',
    ...port,
  },
  tenant: {
    default: 'default',
    type: 'string',
    env: 'URSA_TENANT',
    yamlKey: 'tenant',
    flag: '--tenant',
    allowed: 'a name of letters, digits, _ . - (at most 128)',
    doc: 'Tenant a CLI command uses when it names none.',
    fromYaml: nameSchema,
    fromText: nameSchema,
  },
  project: {
    default: 'demo',
    type: 'string',
    env: 'URSA_PROJECT',
    yamlKey: 'project',
    flag: '--project',
    allowed: 'a name of letters, digits, _ . - (at most 128)',
    doc: 'Project a CLI command uses when it names none.',
    fromYaml: nameSchema,
    fromText: nameSchema,
  },
  outboundAllow: {
    ...OUTBOUND_LIST,
    env: 'URSA_OUTBOUND_ALLOW',
    yamlKey: 'outboundAllow',
    flag: '--outbound-allow',
    doc: 'When not empty, the only hosts and address ranges the http engine may connect to.',
  },
  outboundDeny: {
    ...OUTBOUND_LIST,
    env: 'URSA_OUTBOUND_DENY',
    yamlKey: 'outboundDeny',
    flag: '--outbound-deny',
    doc: 'Hosts and address ranges the http engine may never connect to, checked on the address connected to.',
  },
  secretHosts: {
    default: {},
    type: 'mapping',
    // Not URSA_SECRET_…: a recipe may name any variable of that form as a secret header.
    env: 'URSA_OUTBOUND_SECRET_HOSTS',
    yamlKey: 'secretHosts',
    flag: '--secret-hosts',
    allowed:
      'a mapping of URSA_SECRET_ variable → list of host names, *.domain or IP addresses (VAR=host,host;VAR2=host in the environment or a flag)',
    doc: 'The hosts each secret variable may be sent to; a recipe naming it for another host is refused.',
    fromYaml: secretHostsMap,
    fromText: secretHostsText,
  },
  publicUrl: {
    default: '',
    type: 'string',
    env: 'URSA_PUBLIC_URL',
    yamlKey: 'publicUrl',
    flag: '--public-url',
    allowed: 'an absolute http:// or https:// URL without credentials, query or fragment, or empty',
    doc: 'The address agent services reach this server at for their callbacks; without it, agent recipes are refused.',
    fromYaml: publicUrlSchema,
    fromText: publicUrlSchema,
  },
};

/** The setting keys in definition order. */
export const settingKeys = Object.keys(settingDefinitions) as readonly SettingKey[];

/** The workflow template limits of the settings, as the runtime takes them (issue #19). */
export function templateLimitsOf(settings: Settings): TemplateLimits {
  return {
    parseChars: settings.templateParseLimit,
    renderMs: settings.templateRenderLimitMs,
    memoryUnits: settings.templateMemoryLimit,
    listElements: settings.templateListLimit,
    paramBytes: settings.templateParamLimit,
    runBytes: settings.templateRunLimit,
  };
}
