import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { closestName } from '../errors/did-you-mean.js';
import { UrsaError } from '../errors/index.js';
import { type SettingDefinition, settingDefinitions, settingKeys } from './schema.js';
import type { SettingKey, Settings } from './settings.js';

/** The configuration file looked for in the working directory when none is named. */
export const CONFIG_FILE = 'ursa.yaml';

/**
 * Where the value in force came from: `default`; the configuration file (`ursa.yaml`, or an
 * explicitly named file as it was given); `env URSA_X`; or `flag --x`.
 */
export type SettingSource = string;

/**
 * Command-line overrides, keyed by setting, each as the text the user typed (`{ db: 'x.db',
 * port: '9000' }`). They are validated like environment variables and win over every other source.
 */
export type ConfigOverrides = { readonly [K in SettingKey]?: string | undefined };

/**
 * The effective operator configuration: every {@link Settings} value, plus where each came from.
 * Deeply frozen; made only by {@link loadConfig}.
 */
export interface Config extends Settings {
  /** For every setting, the source of its value. */
  readonly sources: Readonly<Record<SettingKey, SettingSource>>;
  /** For a setting whose value was changed after validation, why (`clamped from 400 to 365`). */
  readonly notes: Readonly<Partial<Record<SettingKey, string>>>;
}

/** What {@link loadConfig} reads. */
export interface LoadConfigOptions {
  /** Directory `ursa.yaml` is looked for in, and relative file paths are resolved against. */
  readonly cwd: string;
  /** The environment; only the `URSA_*` names of `settingDefinitions` are read, others are ignored. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** A configuration file to read instead of `<cwd>/ursa.yaml`; it must exist. */
  readonly file?: string | undefined;
  /** Command-line flags; see {@link ConfigOverrides}. */
  readonly overrides?: ConfigOverrides | undefined;
}

/** One refused value: where it was set (`ursa.yaml: port`, `env URSA_PORT`, `--db`), the value, why. */
interface Problem {
  readonly field: string;
  readonly value: unknown;
  readonly allowed: string | undefined;
  /** What is wrong, quoting the value: `"0" is out of range`. */
  readonly reason: string;
}

/** `<reason>; allowed: <allowed>`. */
function explain(problem: Problem): string {
  return problem.allowed === undefined ? problem.reason : `${problem.reason}; allowed: ${problem.allowed}`;
}

/**
 * The `CONFIG_INVALID` error for every problem found: one line per problem, `<field>: <reason>;
 * allowed: <allowed>`; `issues` with each (`path` = the field); `field` = the first problem's;
 * `value` and `allowed` only when there is one problem.
 */
function configRefused(problems: readonly Problem[]): UrsaError {
  const [first] = problems;
  const single = problems.length === 1 && first !== undefined;
  return new UrsaError('CONFIG_INVALID', problems.map((p) => `${p.field}: ${explain(p)}`).join('\n'), {
    ...(first === undefined ? {} : { field: first.field }),
    ...(single && first.value !== undefined ? { value: first.value } : {}),
    ...(single && first.allowed !== undefined ? { allowed: first.allowed } : {}),
    issues: problems.map((p) => ({ path: p.field, message: explain(p) })),
  });
}

/** A raw value from one source, before validation. */
interface Candidate {
  readonly key: SettingKey;
  readonly value: unknown;
  /** Provenance label: `ursa.yaml`, `env URSA_PORT`, `flag --db`. */
  readonly source: SettingSource;
  /** How error messages name it: `ursa.yaml: port`, `env URSA_PORT`, `--db`. */
  readonly field: string;
  /** True for environment and flag text, false for values YAML typed. */
  readonly text: boolean;
}

/** `value` with secrets hidden (the password of a PostgreSQL URL). */
function displayed(key: SettingKey, value: unknown): unknown {
  const definition = settingDefinitions[key] as SettingDefinition<unknown>;
  return typeof value === 'string' && definition.display ? definition.display(value) : value;
}

/** `value` as an error message quotes it: JSON, secrets hidden, at most 80 characters. */
function show(key: SettingKey, value: unknown): string {
  const json = JSON.stringify(displayed(key, value)) ?? String(value);
  return json.length > 80 ? `${json.slice(0, 77)}...` : json;
}

function issue(field: string, reason: string, allowed?: string, value?: unknown): Problem {
  return { field, value, allowed, reason };
}

/**
 * A loose match of an unknown key to a setting, for "did you mean": case, dashes and a `Ms` suffix,
 * else a slip of a letter or two (`shutdownGrase`, issue #23).
 */
function suggest(key: string): string | undefined {
  const norm = (s: string) =>
    s
      .toLowerCase()
      .replace(/[^a-z0-9]/g, '')
      .replace(/^ursa/, '')
      .replace(/ms$/, '');
  const wanted = norm(key);
  const yamlKeys = settingKeys.map((k) => settingDefinitions[k].yamlKey);
  return yamlKeys.find((yamlKey) => norm(yamlKey) === wanted) ?? closestName(key, yamlKeys) ?? undefined;
}

/** Reads the configuration file; undefined when the default file does not exist. */
function readConfigFile(
  cwd: string,
  file: string | undefined,
  issues: Problem[],
): { label: string; text: string } | undefined {
  const label = file ?? CONFIG_FILE;
  const path = resolve(cwd, label);
  try {
    return { label, text: readFileSync(path, 'utf8') };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && file === undefined) return undefined;
    const reason =
      code === 'ENOENT'
        ? `file not found (looked for ${path})`
        : code === 'EISDIR'
          ? 'is a directory, not a file'
          : `unreadable (${code ?? (error instanceof Error ? error.message : String(error))})`;
    issues.push(issue(label, reason, 'a readable YAML file'));
    return undefined;
  }
}

/** The candidates of a configuration file; structural problems go to `issues`. */
function fileCandidates(label: string, text: string, issues: Problem[]): Candidate[] {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    const lines = text.split(/\r?\n/);
    for (const error of doc.errors) {
      const at = error.linePos?.[0];
      if (error.code === 'DUPLICATE_KEY' && at !== undefined) {
        const key = /^\s*["']?([^"':#]+?)["']?\s*:/.exec(lines[at.line - 1] ?? '')?.[1];
        issues.push(
          issue(
            key === undefined ? label : `${label}: ${key}`,
            `set twice (again at line ${at.line}, column ${at.col})`,
            'each setting once',
          ),
        );
      } else {
        const where = at === undefined ? '' : ` at line ${at.line}, column ${at.col}`;
        const first = error.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? error.code;
        issues.push(issue(label, `not valid YAML${where}: ${first}`));
      }
    }
    return [];
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    issues.push(issue(label, `unreadable: ${error instanceof Error ? error.message : String(error)}`));
    return [];
  }
  if (data === null || data === undefined) return [];
  if (typeof data !== 'object' || Array.isArray(data)) {
    issues.push(issue(label, 'not a mapping of settings', 'a YAML mapping such as `port: 8080`'));
    return [];
  }
  const byYamlKey = new Map(settingKeys.map((k) => [settingDefinitions[k].yamlKey, k]));
  const candidates: Candidate[] = [];
  for (const [yamlKey, value] of Object.entries(data)) {
    const key = byYamlKey.get(yamlKey);
    if (key === undefined) {
      const hint = suggest(yamlKey);
      issues.push(
        issue(
          `${label}: ${yamlKey}`,
          `unknown setting${hint === undefined ? '' : ` (did you mean ${hint}?)`}`,
          [...byYamlKey.keys()].join(', '),
        ),
      );
      continue;
    }
    candidates.push({ key, value, source: label, field: `${label}: ${yamlKey}`, text: false });
  }
  return candidates;
}

function textCandidates(
  values: (key: SettingKey) => string | undefined,
  source: (key: SettingKey) => SettingSource,
  field: (key: SettingKey) => string,
): Candidate[] {
  return settingKeys.flatMap((key) => {
    const value = values(key);
    return value === undefined ? [] : [{ key, value, source: source(key), field: field(key), text: true }];
  });
}

function validate(candidate: Candidate): { value: unknown } | Problem {
  const definition = settingDefinitions[candidate.key] as SettingDefinition<unknown>;
  const { field, value } = candidate;
  const shown = show(candidate.key, value);
  const fail = (reason: string) =>
    issue(field, `${shown} ${reason}`, definition.allowed, displayed(candidate.key, value));
  if (candidate.text && value === '') return fail('is empty (unset it to use the value below it)');
  if (value === null) return fail('has no value (remove the key to use the default)');
  const result = (candidate.text ? definition.fromText : definition.fromYaml).safeParse(value);
  return result.success ? { value: result.data } : fail(result.error.issues[0]?.message ?? 'is not allowed');
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/**
 * Reads, validates and freezes the operator configuration (decisions §2, §4, §5), once at start.
 *
 * Precedence, lowest first: defaults < the configuration file (`<cwd>/ursa.yaml`, which may be
 * absent, or `file`, which must exist) < `URSA_*` environment variables < `overrides`. The file is
 * strict: duplicate keys, unknown keys and YAML errors are refused. Every value from every
 * source is validated, including ones a higher source overrides, so a broken file never hides
 * behind a flag. A run-log retention above 365 days is clamped (spec §9a) and the note kept in
 * `notes`.
 *
 * Reads the file system only for the configuration file; reads no other global state.
 *
 * @throws {UrsaError} `CONFIG_INVALID` listing every problem, one per line and in `issues`, each
 *   naming its source (`ursa.yaml: port`, `env URSA_PORT`, `--db`), the value and what is allowed.
 */
export function loadConfig(options: LoadConfigOptions): Config {
  const issues: Problem[] = [];
  const read = readConfigFile(options.cwd, options.file, issues);
  const overrides = options.overrides ?? {};
  const candidates = [
    ...(read === undefined ? [] : fileCandidates(read.label, read.text, issues)),
    ...textCandidates(
      (key) => options.env[settingDefinitions[key].env],
      (key) => `env ${settingDefinitions[key].env}`,
      (key) => `env ${settingDefinitions[key].env}`,
    ),
    ...textCandidates(
      (key) => overrides[key],
      (key) => `flag ${settingDefinitions[key].flag}`,
      (key) => settingDefinitions[key].flag,
    ),
  ];

  const values: Record<string, unknown> = {};
  const sources: Record<string, SettingSource> = {};
  const notes: Record<string, string> = {};
  for (const key of settingKeys) {
    values[key] = settingDefinitions[key].default;
    sources[key] = 'default';
  }
  // Candidates are in precedence order, so the last valid one of each key wins.
  for (const candidate of candidates) {
    const result = validate(candidate);
    if ('reason' in result) {
      issues.push(result);
      continue;
    }
    values[candidate.key] = result.value;
    sources[candidate.key] = candidate.source;
  }
  if (issues.length > 0) throw configRefused(issues);

  for (const key of settingKeys) {
    const definition = settingDefinitions[key] as SettingDefinition<unknown>;
    const clamped = definition.clamp?.(values[key]);
    if (clamped !== undefined) {
      values[key] = clamped.value;
      notes[key] = clamped.note;
    }
  }
  return deepFreeze({ ...(values as unknown as Settings), sources, notes }) as Config;
}

/**
 * The value of one setting as `ursa config` shows it: a PostgreSQL password hidden, the rest as
 * it is.
 */
export function displayValue<K extends SettingKey>(key: K, value: Settings[K]): Settings[K] {
  const definition = settingDefinitions[key] as SettingDefinition<Settings[K]>;
  return definition.display ? definition.display(value) : value;
}
