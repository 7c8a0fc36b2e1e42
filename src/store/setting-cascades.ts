import { MAX_BUDGET_RUNS, MAX_RETENTION_DAYS } from '../config/schema.js';
import { NO_BUDGET, type RunBudget } from '../decisions/budget.js';
import { timeZone } from '../time/zone.js';
import { TENANT_PROJECT } from './document-rows.js';
import type { Repositories } from './index.js';
import type { SettingScope } from './settings.js';

/**
 * The settings cascades of decisions §2 and the known setting keys. Every cascade is a function of
 * the repositories and its inputs, read afresh on each call (spec §9a: "freshly resolved per
 * upsert"), so a changed setting applies from the next read without a restart.
 *
 * A stored value that its key's parser refuses (written around `setSetting` (`service/settings.ts`)) counts as not
 * set: the cascade goes on to the next level, so a broken row never stops a run-log write.
 */

/** What the cascades read: the settings rows and the users. */
export type SettingsRepos = Pick<Repositories, 'settings' | 'users'>;

/** Where a setting may live (decisions §2). */
export const SETTING_SCOPES: readonly SettingScope[] = ['user', 'tenant', 'project'];

/** The display time zone when neither the user nor the tenant names one (decisions §2). */
export const DEFAULT_DISPLAY_TIMEZONE = 'UTC';
/** Feed retention when the tenant sets none, days (spec §12: "currently 90 days as a suggestion"). */
export const DEFAULT_FEED_RETENTION_DAYS = 90;
/** `lifecycleType` when the project sets none. */
export const DEFAULT_LIFECYCLE_TYPE = 'NORMAL';
/** A project pinned active whatever it holds (decisions §2 "Project on a Pod"). */
export const PERMANENT = 'PERMANENT';

/** One known setting key: where it may be set, how its text value is checked, and what it means. */
export interface SettingKeyDefinition {
  /** The scopes it may be set on. */
  readonly scopes: readonly SettingScope[];
  /** For scope `project`: whether subject `_tenant` (every project of the tenant) is allowed. */
  readonly tenantProject: boolean;
  /** The value to store (normalised), or undefined when `text` is not allowed. */
  readonly parse: (text: string) => string | undefined;
  /** What values are allowed, for messages. */
  readonly allowed: string;
  readonly doc: string;
}

/** Whole numbers of at most six digits: days, far beyond any retention, and exact in epoch-ms arithmetic. */
function parseDays(text: string): string | undefined {
  return /^-?[0-9]{1,6}$/.test(text.trim()) ? String(Number(text.trim())) : undefined;
}

/** A run budget of a window: a whole number of runs, 0 for no limit. */
function parseBudget(text: string): string | undefined {
  const value = text.trim();
  return /^[0-9]{1,7}$/.test(value) && Number(value) <= MAX_BUDGET_RUNS ? String(Number(value)) : undefined;
}

function parseZone(text: string): string | undefined {
  try {
    return timeZone(text.trim()).id;
  } catch {
    return undefined;
  }
}

function parseLifecycle(text: string): string | undefined {
  const value = text.trim().toUpperCase();
  return value === 'NORMAL' || value === PERMANENT ? value : undefined;
}

/** The setting keys Ursa knows (decisions §2); `service/settings.ts` refuses every other key. */
export const SETTING_KEYS = {
  'display.timezone': {
    scopes: ['user', 'tenant'],
    tenantProject: false,
    parse: parseZone,
    allowed: 'an IANA time zone id such as Europe/Berlin, America/New_York or UTC',
    doc: 'Zone times are shown in: user → tenant → UTC.',
  },
  'scheduler.log.retentionDays': {
    scopes: ['project'],
    tenantProject: true,
    parse: parseDays,
    allowed: `a whole number of days: 1-${MAX_RETENTION_DAYS} (more is clamped to ${MAX_RETENTION_DAYS}), 0 keeps run logs forever, negative writes none`,
    doc: 'Run-log retention: project → project _tenant → operator runLogRetentionDays.',
  },
  'scheduler.budget.runsPerHour': {
    scopes: ['project'],
    tenantProject: true,
    parse: parseBudget,
    allowed: `a whole number of runs 0-${MAX_BUDGET_RUNS} (0: no limit)`,
    doc: 'Runs a project may start in any rolling hour: project → project _tenant → operator budgetRunsPerHour.',
  },
  'scheduler.budget.runsPerDay': {
    scopes: ['project'],
    tenantProject: true,
    parse: parseBudget,
    allowed: `a whole number of runs 0-${MAX_BUDGET_RUNS} (0: no limit)`,
    doc: 'Runs a project may start in any rolling 24 hours: project → project _tenant → operator budgetRunsPerDay.',
  },
  'feed.retentionDays': {
    scopes: ['tenant'],
    tenantProject: false,
    parse: parseDays,
    allowed: 'a whole number of days; 0 or less keeps feed lines forever',
    doc: `Activity-feed retention of the tenant, default ${DEFAULT_FEED_RETENTION_DAYS} days.`,
  },
  lifecycleType: {
    scopes: ['project'],
    tenantProject: false,
    parse: parseLifecycle,
    allowed: 'NORMAL or PERMANENT',
    doc: 'PERMANENT pins a project active even without scheduler documents of its own.',
  },
} as const satisfies Record<string, SettingKeyDefinition>;

/** A known setting key. */
export type SettingKey = keyof typeof SETTING_KEYS;

/** A value of a cascade and the level it came from, e.g. `setting project/ops` or `operator config`. */
export interface ResolvedSetting<T> {
  readonly value: T;
  readonly from: string;
}

const levelName = (scope: SettingScope, subject: string) =>
  scope === 'tenant' ? 'setting tenant' : `setting ${scope}/${subject}`;

/** The stored value of `key` at one level, parsed; undefined when unset or not allowed. */
async function stored(
  repos: SettingsRepos,
  tenant: string,
  scope: SettingScope,
  subject: string,
  key: SettingKey,
): Promise<string | undefined> {
  const text = await repos.settings.get(tenant, scope, subject, key);
  return text === undefined ? undefined : SETTING_KEYS[key].parse(text);
}

/**
 * {@link displayTimezone} with the level it came from. The user level is the user's setting, then
 * the zone of the user's profile (`users.display_timezone`, set by `ursa user add --tz`): an
 * explicit setting overrides the profile, and both override the tenant.
 */
export async function resolveDisplayTimezone(
  repos: SettingsRepos,
  tenant: string,
  user: string,
): Promise<ResolvedSetting<string>> {
  const own = await stored(repos, tenant, 'user', user, 'display.timezone');
  if (own !== undefined) return { value: own, from: levelName('user', user) };
  const profile = (await repos.users.get(tenant, user))?.displayTimezone ?? null;
  const fromProfile = profile === null ? undefined : parseZone(profile);
  if (fromProfile !== undefined) return { value: fromProfile, from: `profile of user ${user}` };
  return tenantDisplayTimezone(repos, tenant);
}

/** The tenant level of {@link resolveDisplayTimezone}: the tenant's setting, else `UTC`. */
export async function tenantDisplayTimezone(
  repos: SettingsRepos,
  tenant: string,
): Promise<ResolvedSetting<string>> {
  return tenantLevel(repos, tenant, 'display.timezone', DEFAULT_DISPLAY_TIMEZONE, (text) => text);
}

/** A tenant setting parsed by `parse`, else `fallback` (from `default`). */
async function tenantLevel<T>(
  repos: SettingsRepos,
  tenant: string,
  key: SettingKey,
  fallback: T,
  parse: (text: string) => T,
): Promise<ResolvedSetting<T>> {
  const own = await stored(repos, tenant, 'tenant', '', key);
  return own === undefined
    ? { value: fallback, from: 'default' }
    : { value: parse(own), from: levelName('tenant', '') };
}

/**
 * The zone a user sees times in (decisions §2 settings cascade, `display.timezone` user → tenant →
 * UTC). The user level is the user's `display.timezone` setting, else the zone of the user's
 * profile (`users.display_timezone`); then the tenant's setting; then `UTC`. Returns a canonical
 * IANA id. A user the tenant does not have gets the tenant's zone or `UTC`.
 */
export async function displayTimezone(repos: SettingsRepos, tenant: string, user: string): Promise<string> {
  return (await resolveDisplayTimezone(repos, tenant, user)).value;
}

const clampDays = (days: number) => Math.min(days, MAX_RETENTION_DAYS);

/** {@link runLogRetentionDays} with the level it came from. */
export async function resolveRunLogRetentionDays(
  repos: SettingsRepos,
  tenant: string,
  project: string,
  operatorDefault: number,
): Promise<ResolvedSetting<number>> {
  const projectLevel = await projectCascade(repos, tenant, project, 'scheduler.log.retentionDays');
  if (projectLevel !== undefined) return { ...projectLevel, value: clampDays(projectLevel.value) };
  return { value: clampDays(operatorDefault), from: 'operator config' };
}

/**
 * A numeric project setting at `project/<project>`, else at `project/_tenant` (decisions §2):
 * the first level that has it, or undefined when neither does (the caller's operator level follows).
 */
async function projectCascade(
  repos: SettingsRepos,
  tenant: string,
  project: string,
  key: SettingKey,
): Promise<ResolvedSetting<number> | undefined> {
  for (const level of project === TENANT_PROJECT ? [project] : [project, TENANT_PROJECT]) {
    const value = await stored(repos, tenant, 'project', level, key);
    if (value !== undefined) return { value: Number(value), from: levelName('project', level) };
  }
  return undefined;
}

/**
 * Run-log retention in days (spec §9a TTL; decisions §2): the setting `scheduler.log.retentionDays`
 * on `project/<project>`, else on `project/_tenant`, else `operatorDefault` (the operator's
 * `runLogRetentionDays`, default 7) — first match wins. Tri-state: > 0 keeps a run log that many
 * days (more than 365 is clamped to 365), 0 keeps it forever (no `expiresAt`), < 0 writes none.
 */
export async function runLogRetentionDays(
  repos: SettingsRepos,
  tenant: string,
  project: string,
  operatorDefault: number,
): Promise<number> {
  return (await resolveRunLogRetentionDays(repos, tenant, project, operatorDefault)).value;
}

/** {@link feedRetentionDays} with the level it came from. */
export async function resolveFeedRetentionDays(
  repos: SettingsRepos,
  tenant: string,
): Promise<ResolvedSetting<number>> {
  return tenantLevel(repos, tenant, 'feed.retentionDays', DEFAULT_FEED_RETENTION_DAYS, Number);
}

/**
 * Activity-feed retention of a tenant in days (spec §12 open point, settled as a tenant setting):
 * the tenant's `feed.retentionDays`, default 90. 0 or less keeps feed lines forever. The sweeper
 * deletes lines older than this many days (`runtime/sweeper.ts`).
 */
export async function feedRetentionDays(repos: SettingsRepos, tenant: string): Promise<number> {
  return (await resolveFeedRetentionDays(repos, tenant)).value;
}

/** {@link isPinned}'s value, `NORMAL` or `PERMANENT`, with the level it came from. */
export async function resolveLifecycleType(
  repos: SettingsRepos,
  tenant: string,
  project: string,
): Promise<ResolvedSetting<string>> {
  const own = await stored(repos, tenant, 'project', project, 'lifecycleType');
  return own === undefined
    ? { value: DEFAULT_LIFECYCLE_TYPE, from: 'default' }
    : { value: own, from: levelName('project', project) };
}

/**
 * True when the project is pinned active (decisions §2 "Project on a Pod"): its setting
 * `lifecycleType` is `PERMANENT`. Not inherited from `_tenant`.
 */
export async function isPinned(repos: SettingsRepos, tenant: string, project: string): Promise<boolean> {
  return (await resolveLifecycleType(repos, tenant, project)).value === PERMANENT;
}

/** The settings of a project's run budget (issue #22). */
export type BudgetKey = 'scheduler.budget.runsPerHour' | 'scheduler.budget.runsPerDay';

/**
 * One limit of a project's run budget with the level it came from: the setting `key` on
 * `project/<project>`, else on `project/_tenant`, else `operator` (the operator's, absent: none);
 * first match wins. 0 means no limit, at any level (so a project can lift a tenant-wide budget).
 */
export async function resolveBudgetLimit(
  repos: SettingsRepos,
  tenant: string,
  project: string,
  key: BudgetKey,
  operator: number | undefined,
): Promise<ResolvedSetting<number>> {
  const projectLevel = await projectCascade(repos, tenant, project, key);
  if (projectLevel !== undefined) return projectLevel;
  return { value: operator ?? 0, from: operator === undefined ? 'default' : 'operator config' };
}

/**
 * The run budget of a project (issue #22): `scheduler.budget.runsPerHour` and
 * `scheduler.budget.runsPerDay`, each through {@link resolveBudgetLimit}; a limit of 0 is none.
 */
export async function runBudget(
  repos: SettingsRepos,
  tenant: string,
  project: string,
  operator: RunBudget = NO_BUDGET,
): Promise<RunBudget> {
  const limit = async (key: BudgetKey, fallback: number | undefined) => {
    const { value } = await resolveBudgetLimit(repos, tenant, project, key, fallback);
    return value === 0 ? undefined : value;
  };
  return {
    runsPerHour: await limit('scheduler.budget.runsPerHour', operator.runsPerHour),
    runsPerDay: await limit('scheduler.budget.runsPerDay', operator.runsPerDay),
  };
}
