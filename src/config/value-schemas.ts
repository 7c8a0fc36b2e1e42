import * as z from 'zod';
import { parseHostPattern } from '../net/host-pattern.js';
import { OUTBOUND_ENTRY_ALLOWED, parseOutboundEntry } from '../net/outbound-policy.js';
import { SECRET_ENV_NAME, type SecretHosts } from '../net/secret-hosts.js';
import { parseFixedDuration } from '../time/duration.js';
import { LogLevel } from './settings.js';

/**
 * What a value of each kind of operator setting may be, as zod schemas with the issue phrases
 * operators see: durations, whole numbers, names, the store, hosts, outbound lists and secret
 * host bindings. `schema.ts` gives each setting one of these.
 */

/** An ISO-8601 duration in milliseconds, at least `minMs`. */
export function durationSchema(minMs: number): z.ZodType<number> {
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

/** A whole number from `min` to `max`: a YAML number, or the text of one in the environment or a flag. */
export function integerSchema(
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
export const nameSchema = z
  .string({ error: 'is not a text value' })
  .regex(NAME, { error: 'is not a valid name' });

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

/** The store: a SQLite file path, or a PostgreSQL URL that parses. */
export const dbSchema = z.string({ error: 'is not a text value' }).superRefine((db, ctx) => {
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

/** A host name or IP address, without spaces or slashes. */
export const hostSchema = z
  .string({ error: 'is not a text value' })
  .regex(/^[^\s/]+$/, { error: 'is not a host name or IP address' });

/**
 * `publicUrl` (issue #25): empty (none), or the absolute http:// or https:// URL agent services
 * call back at, without credentials, query or fragment; a trailing `/` is dropped.
 */
export const publicUrlSchema = z
  .string({ error: 'is not a text value' })
  .superRefine((text, ctx) => {
    const problem = text === '' ? undefined : publicUrlProblem(text);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  })
  .transform((text) => text.replace(/\/+$/, ''));

/** Why `text` is no public URL Ursa can be called back at, or undefined when it is one. */
export function publicUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'is not an http:// or https:// URL';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  if (url.search !== '' || url.hash !== '') return 'must have no query or fragment';
  return undefined;
}

/** One of {@link LogLevel}. */
export const logLevelSchema = z.enum(LogLevel, { error: 'is not a log level' });

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
export const OUTBOUND_LIST = {
  default: [] as readonly string[],
  type: 'list',
  allowed: `a list (comma-separated in the environment or a flag) of ${OUTBOUND_ENTRY_ALLOWED}`,
  ...listSchema(outboundEntryProblem),
} as const;

/** `secretHosts`: variable → host patterns, each variable a secret variable bound to one host or more. */
export const secretHostsMap = z
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
export const secretHostsText = z
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
