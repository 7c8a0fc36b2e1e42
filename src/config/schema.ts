import * as z from 'zod';
import { parseHostPattern } from '../net/host-pattern.js';
import { OUTBOUND_ENTRY_ALLOWED, parseOutboundEntry } from '../net/outbound-policy.js';
import type { SecretHosts } from '../net/secret-hosts.js';
import { SECRET_ENV_NAME } from '../recipes/http-fields.js';
import { parseFixedDuration } from '../time/duration.js';
import { DEFAULT_TEMPLATE_LIMITS, type TemplateLimits } from '../workflows/template-limits.js';

const DURATION_ALLOWED_UNITS = 'weeks, days (24 h), hours, minutes and seconds';

/**
 * Operator settings (decisions §2, §4, §5): one definition per setting with its default, where it
 * may be set (`ursa.yaml` key, `URSA_*` variable, command-line flag), what is allowed and one line of
 * documentation. `load.ts` reads the sources; this module only says what each value may be.
 */

/** Log levels, most to least severe, as pino names them; `silent` logs nothing. */
export const LogLevel = {
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  info: 'info',
  debug: 'debug',
  trace: 'trace',
  silent: 'silent',
} as const;
export type LogLevel = (typeof LogLevel)[keyof typeof LogLevel];

/** The validated operator settings. Durations are whole milliseconds. */
export interface Settings {
  /**
   * Store (decisions §5): a SQLite file path (relative to the working directory) or a
   * `postgres://` / `postgresql://` URL. Default `./data/ursa.db`.
   */
  readonly db: string;
  /** Default `info`. */
  readonly logLevel: LogLevel;
  /**
   * Misfire threshold (decisions §4), milliseconds, > 0: with `misfire: skip`, a due instant older
   * than this is not run. Default 60 000 (PT60S).
   */
  readonly misfireThresholdMs: number;
  /**
   * Operator fallback of `scheduler.log.retentionDays` (decisions §2, spec §9a), whole days:
   * > 0 keep run logs that many days (at most 365; larger values are clamped), 0 keep them
   * forever, < 0 write no run-log documents. Default 7.
   */
  readonly runLogRetentionDays: number;
  /** How long a stopping worker waits for running processes, milliseconds, ≥ 0. Default 30 000 (PT30S). */
  readonly shutdownGraceMs: number;
  /** Whether scheduler documents may target workflow runs (decisions §2). Default true. */
  readonly workflows: boolean;
  /** Longest workflow template (one param string), characters, ≥ 1. Default 8 192. */
  readonly templateParseLimit: number;
  /** Render time of one workflow step's templates, milliseconds, ≥ 1. Default 20 (PT0.02S). */
  readonly templateRenderLimitMs: number;
  /** Characters and list elements one workflow step's templates may allocate, ≥ 1. Default 250 000. */
  readonly templateMemoryLimit: number;
  /** Longest list a template filter may be given, elements, ≥ 1. Default 2 000. */
  readonly templateListLimit: number;
  /** Largest rendered workflow param, bytes of UTF-8, ≥ 1. Default 65 536. */
  readonly templateParamLimit: number;
  /** Largest sum of one workflow run's rendered params, bytes of UTF-8, ≥ 1. Default 1 048 576. */
  readonly templateRunLimit: number;
  /** Address the HTTP server listens on. Default `127.0.0.1`. */
  readonly host: string;
  /** Port the HTTP server listens on, 1-65535. Default 8080. */
  readonly port: number;
  /** Tenant the CLI uses when a command names none. Default `default`. */
  readonly tenant: string;
  /** Project the CLI uses when a command names none. Default `demo`. */
  readonly project: string;
  /**
   * Where the `http` engine may connect (issue #19): host patterns and address ranges; when not
   * empty, only these. Default empty (anywhere but the denied).
   */
  readonly outboundAllow: readonly string[];
  /** Where the `http` engine may never connect: host patterns and address ranges. Default empty. */
  readonly outboundDeny: readonly string[];
  /**
   * The hosts each secret variable may be sent to: `URSA_SECRET_…` name → host patterns. A
   * variable not named may go to any host. Default none.
   */
  readonly secretHosts: SecretHosts;
}

/** The name of one setting, as a key of {@link Settings}. */
export type SettingKey = keyof Settings;

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

/** The largest run-log retention, in days (spec §9a). */
export const MAX_RETENTION_DAYS = 365;

/** An ISO-8601 duration in milliseconds, at least `minMs`. */
function durationSchema(minMs: number): z.ZodType<number> {
  return z
    .string({ error: 'is not a text value' })
    .transform((text, ctx) => {
      const parsed = parseFixedDuration(text, { allowZero: true });
      if ('reason' in parsed) {
        ctx.addIssue({ code: 'custom', message: parsed.reason.slice(JSON.stringify(text).length + 1) });
        return z.NEVER;
      }
      return parsed.ms;
    })
    .pipe(z.number().min(minMs, { error: minMs > 0 ? 'is not greater than zero' : 'is negative' }));
}

function integerSchema(
  min: number,
  max: number,
): { fromYaml: z.ZodType<number>; fromText: z.ZodType<number> } {
  const range = z
    .number({ error: 'is not a number' })
    .int({ error: 'is not a whole number' })
    .min(min, { error: 'is out of range' })
    .max(max, { error: 'is out of range' });
  return {
    fromYaml: range,
    fromText: z
      .string()
      .regex(/^[+-]?[0-9]{1,16}$/, { error: 'is not a whole number' })
      .transform(Number)
      .pipe(range),
  };
}

/** Decisions §6 names: a letter, digit or underscore first (`_tenant`), then letters, digits, `._-`. */
const NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
const nameSchema = z.string({ error: 'is not a text value' }).regex(NAME, { error: 'is not a valid name' });

const POSTGRES_PROTOCOLS = new Set(['postgres:', 'postgresql:']);

/** Hides the password of a PostgreSQL URL; any other value is returned as it is. */
export function redactDb(db: string): string {
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(db)) return db;
  try {
    const url = new URL(db);
    if (url.password === '') return db;
    url.password = '***';
    return url.toString();
  } catch {
    return db.replace(/\/\/([^/@:]*):[^/@]*@/, '//$1:***@');
  }
}

const dbSchema = z.string({ error: 'is not a text value' }).superRefine((db, ctx) => {
  if (db.trim() === '') {
    ctx.addIssue({ code: 'custom', message: 'is empty' });
    return;
  }
  if (db.includes('\0')) {
    ctx.addIssue({ code: 'custom', message: 'contains a NUL character' });
    return;
  }
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(db);
  if (scheme === null) return; // a SQLite file path
  if (!POSTGRES_PROTOCOLS.has(`${scheme[1]?.toLowerCase()}:`)) {
    ctx.addIssue({ code: 'custom', message: `uses the scheme ${scheme[1]}://, which Ursa has no store for` });
    return;
  }
  try {
    new URL(db);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'is not a valid URL' });
  }
});

const hostSchema = z
  .string({ error: 'is not a text value' })
  .regex(/^[^\s/]+$/, { error: 'is not a host name or IP address' });

const logLevelSchema = z.enum(LogLevel, { error: 'is not a log level' });

/**
 * A list of entries that `check` accepts (it returns why not): a YAML list of strings, or in the
 * environment and on the command line one text of entries separated by commas.
 */
function listSchema(check: (entry: string) => string | undefined): {
  fromYaml: z.ZodType<readonly string[]>;
  fromText: z.ZodType<readonly string[]>;
} {
  const entries = z
    .array(z.string({ error: 'has an entry that is not a text value' }))
    .superRefine((list, ctx) => {
      for (const entry of list) {
        const problem = entry.trim() === '' ? 'is empty' : check(entry.trim());
        if (problem !== undefined) {
          ctx.addIssue({
            code: 'custom',
            message: `has the entry ${JSON.stringify(entry)}, which ${problem}`,
          });
          return;
        }
      }
    });
  return {
    fromYaml: z
      .array(z.unknown(), { error: 'is not a list' })
      .pipe(entries.transform((l) => l.map((e) => e.trim()))),
    fromText: z
      .string()
      .transform((text) => text.split(','))
      .pipe(entries.transform((l) => l.map((e) => e.trim()))),
  };
}

function outboundEntryProblem(entry: string): string | undefined {
  const parsed = parseOutboundEntry(entry);
  return 'problem' in parsed ? parsed.problem : undefined;
}

function hostPatternProblem(entry: string): string | undefined {
  const parsed = parseHostPattern(entry);
  return 'problem' in parsed ? parsed.problem : undefined;
}

const hostList = listSchema(hostPatternProblem);

/** What `outboundAllow` and `outboundDeny` share: an empty list by default, entries of either kind. */
const OUTBOUND_LIST = {
  default: [] as readonly string[],
  type: 'list',
  allowed: `a list (comma-separated in the environment or a flag) of ${OUTBOUND_ENTRY_ALLOWED}`,
  ...listSchema(outboundEntryProblem),
} as const;

/** `secretHosts`: variable → host patterns, each variable a secret variable bound to one host or more. */
const secretHostsMap = z
  .record(z.string(), z.unknown(), { error: 'is not a mapping' })
  .transform((map, ctx) => {
    const result: Record<string, readonly string[]> = {};
    for (const [variable, hosts] of Object.entries(map)) {
      const parsed = (typeof hosts === 'string' ? hostList.fromText : hostList.fromYaml).safeParse(hosts);
      const problem = !SECRET_ENV_NAME.test(variable)
        ? 'is not the name of a secret variable (URSA_SECRET_ followed by upper-case letters, digits and _)'
        : !parsed.success
          ? parsed.error.issues[0]?.message
          : parsed.data.length === 0
            ? 'binds it to no host'
            : undefined;
      if (problem !== undefined || !parsed.success) {
        ctx.addIssue({ code: 'custom', message: `has ${variable}, which ${problem ?? 'is not allowed'}` });
        return z.NEVER;
      }
      Object.defineProperty(result, variable, { value: parsed.data, enumerable: true });
    }
    return result as SecretHosts;
  });

/** `URSA_OUTBOUND_SECRET_HOSTS` / `--secret-hosts`: `VAR=host,host;VAR2=host`. */
const secretHostsText = z
  .string()
  .transform((text, ctx) => {
    const map: Record<string, unknown> = {};
    for (const binding of text.split(';')) {
      if (binding.trim() === '') continue;
      const eq = binding.indexOf('=');
      if (eq === -1) {
        ctx.addIssue({
          code: 'custom',
          message: `has ${JSON.stringify(binding.trim())}, which is not VARIABLE=hosts`,
        });
        return z.NEVER;
      }
      Object.defineProperty(map, binding.slice(0, eq).trim(), {
        value: binding.slice(eq + 1),
        enumerable: true,
      });
    }
    return map;
  })
  .pipe(secretHostsMap);

/** A count of at least 1 (template limits): up to 2^31, far beyond any sensible value. */
const positive = integerSchema(1, 2 ** 31);

const retention = integerSchema(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
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
