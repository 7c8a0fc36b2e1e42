import { NO_BUDGET, type RunBudget } from '../decisions/budget.js';
import { didYouMean } from '../errors/did-you-mean.js';
import { UrsaError } from '../errors/index.js';
import { isValidName, NAME_RULE } from '../scheduler/name.js';
import { TENANT_PROJECT } from '../store/document-rows.js';
import {
  type ResolvedSetting,
  resolveBudgetLimit,
  resolveDisplayTimezone,
  resolveFeedRetentionDays,
  resolveLifecycleType,
  resolveRunLogRetentionDays,
  SETTING_KEYS,
  SETTING_SCOPES,
  type SettingKey,
  type SettingKeyDefinition,
  type SettingsRepos,
  tenantDisplayTimezone,
} from '../store/setting-cascades.js';
import type { SettingRecord, SettingScope } from '../store/settings.js';

/**
 * Writing settings (decisions §2): the checks of a key, scope, subject and value before a row is
 * stored, and {@link effectiveSetting}, the value that applies with the level it came from. The
 * cascades themselves are read beside the rows, in `store/setting-cascades.ts`, so the runtime
 * reads retention without importing this service; they are re-exported here for the interfaces.
 */

export * from '../store/setting-cascades.js';

/** Project names as the configuration accepts them (`_tenant` among them). */
const PROJECT_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;

function invalid(field: string, message: string, value: unknown, allowed: string): UrsaError {
  return new UrsaError('ARGUMENT_INVALID', `${field}: ${message}`, { field, value, allowed });
}

/** The definition of a known key. @throws UrsaError `ARGUMENT_INVALID` for any other key. */
export function settingKey(key: string): SettingKeyDefinition & { readonly key: SettingKey } {
  if (!Object.hasOwn(SETTING_KEYS, key)) {
    const known = Object.keys(SETTING_KEYS).join(', ');
    const hint = didYouMean(key, Object.keys(SETTING_KEYS));
    throw invalid('key', `${JSON.stringify(key)} is not a setting Ursa knows${hint}`, key, known);
  }
  return { key: key as SettingKey, ...SETTING_KEYS[key as SettingKey] };
}

/** Checks a scope name. @throws UrsaError `ARGUMENT_INVALID` unless it is user, tenant or project. */
export function settingScope(scope: string): SettingScope {
  if (!(SETTING_SCOPES as readonly string[]).includes(scope)) {
    throw invalid(
      'scope',
      `${JSON.stringify(scope)} is not a setting scope`,
      scope,
      SETTING_SCOPES.join(', '),
    );
  }
  return scope as SettingScope;
}

/** Checks a subject against its scope (not whether a user exists). */
function checkSubject(scope: SettingScope, subject: string, definition: SettingKeyDefinition): void {
  if (scope === 'tenant') {
    if (subject !== '')
      throw invalid('subject', `${JSON.stringify(subject)}: a tenant setting has no subject`, subject, '""');
    return;
  }
  if (scope === 'user') {
    if (!isValidName(subject))
      throw invalid('subject', `${JSON.stringify(subject)} is not a user name`, subject, NAME_RULE);
    return;
  }
  const projects = definition.tenantProject
    ? `a project name, or ${TENANT_PROJECT} for every project of the tenant`
    : `a project name (not ${TENANT_PROJECT})`;
  if (!PROJECT_NAME.test(subject) || (!definition.tenantProject && subject === TENANT_PROJECT))
    throw invalid('subject', `${JSON.stringify(subject)} is not allowed here`, subject, projects);
}

/**
 * What the functions below read and write settings through: the Runtime, or anything with its
 * settings and users repositories (a test's store).
 */
export interface SettingsHolder {
  readonly repos: SettingsRepos;
}

/** What {@link setSetting} stores. `subject` is the user or project, '' for the tenant. */
export interface SettingInput {
  readonly tenant: string;
  readonly scope: string;
  readonly subject: string;
  readonly key: string;
  readonly value: string;
}

/**
 * Validates and stores one setting (decisions §2). The key must be one of {@link SETTING_KEYS},
 * the scope one of its scopes, the subject fit the scope ('' for the tenant; a project name — and
 * `_tenant` only for `scheduler.log.retentionDays` and `scheduler.budget.*`; an existing user),
 * and the value pass the key's parser; the normalised value is stored (a canonical zone id, a decimal number, upper case).
 *
 * @returns the stored record.
 * @throws UrsaError `ARGUMENT_INVALID` naming the field (`key`, `scope`, `subject` or `value`) and
 *   what is allowed; `USER_NOT_FOUND` for a user setting of a user the tenant does not have.
 */
export async function setSetting(
  rt: SettingsHolder,
  input: SettingInput,
  now: number,
): Promise<SettingRecord> {
  const { repos } = rt;
  const definition = settingKey(input.key);
  const scope = settingScope(input.scope);
  if (!(definition.scopes as readonly string[]).includes(scope)) {
    throw invalid('scope', `${input.key} cannot be set on ${scope}`, scope, definition.scopes.join(', '));
  }
  checkSubject(scope, input.subject, definition);
  const value = definition.parse(input.value);
  if (value === undefined) {
    throw invalid(
      'value',
      `${JSON.stringify(input.value)} is not allowed for ${input.key}`,
      input.value,
      definition.allowed,
    );
  }
  if (scope === 'user' && (await repos.users.get(input.tenant, input.subject)) === undefined) {
    throw new UrsaError(
      'USER_NOT_FOUND',
      `subject: user ${JSON.stringify(input.subject)} does not exist in ${input.tenant}`,
      {
        field: 'subject',
        value: input.subject,
      },
    );
  }
  const record: SettingRecord = {
    tenant: input.tenant,
    scope,
    subject: input.subject,
    key: definition.key,
    value,
  };
  await repos.settings.set(record, now);
  return record;
}

/**
 * Removes one stored setting, so the level below applies again. The key and scope are checked as
 * in {@link setSetting}; returns false when nothing was stored there.
 *
 * @throws UrsaError `ARGUMENT_INVALID` for an unknown key or scope.
 */
export async function unsetSetting(rt: SettingsHolder, input: Omit<SettingInput, 'value'>): Promise<boolean> {
  const { repos } = rt;
  const definition = settingKey(input.key);
  const scope = settingScope(input.scope);
  return repos.settings.remove(input.tenant, scope, input.subject, definition.key);
}

/**
 * The value that applies to `subject` for `key` through its cascade, and where it came from:
 * `display.timezone` of a user (user → profile → tenant → UTC) or of the tenant (tenant → UTC),
 * `scheduler.log.retentionDays` of a project, `feed.retentionDays` of the tenant, `lifecycleType`
 * of a project, `scheduler.budget.*` of a project (0: no limit). `operatorRunLogRetentionDays` is
 * the operator's `runLogRetentionDays`, `operatorBudget` its `budgetRunsPerHour`/`budgetRunsPerDay`.
 *
 * @throws UrsaError `ARGUMENT_INVALID` for an unknown key, or a scope the key does not live on.
 */
export async function effectiveSetting(
  rt: SettingsHolder,
  input: Omit<SettingInput, 'value'>,
  operatorRunLogRetentionDays: number,
  operatorBudget: RunBudget = NO_BUDGET,
): Promise<ResolvedSetting<string>> {
  const { repos } = rt;
  const { key, scopes } = settingKey(input.key);
  const scope = settingScope(input.scope);
  if (!(scopes as readonly string[]).includes(scope))
    throw invalid('scope', `${key} does not apply to ${scope}`, scope, scopes.join(', '));
  const text = <T>(r: ResolvedSetting<T>) => ({ value: String(r.value), from: r.from });
  switch (key) {
    case 'display.timezone':
      return scope === 'user'
        ? resolveDisplayTimezone(repos, input.tenant, input.subject)
        : tenantDisplayTimezone(repos, input.tenant);
    case 'scheduler.log.retentionDays':
      return text(
        await resolveRunLogRetentionDays(repos, input.tenant, input.subject, operatorRunLogRetentionDays),
      );
    case 'feed.retentionDays':
      return text(await resolveFeedRetentionDays(repos, input.tenant));
    case 'lifecycleType':
      return resolveLifecycleType(repos, input.tenant, input.subject);
    case 'scheduler.budget.runsPerHour':
    case 'scheduler.budget.runsPerDay': {
      const operator =
        key === 'scheduler.budget.runsPerHour' ? operatorBudget.runsPerHour : operatorBudget.runsPerDay;
      return text(await resolveBudgetLimit(repos, input.tenant, input.subject, key, operator));
    }
  }
}

/**
 * The stored settings of `tenant` (not the cascades' results), optionally only of one `scope` and,
 * with it, one `subject` ('' for the tenant), sorted by scope, subject and key.
 */
export function listSettings(
  rt: SettingsHolder,
  tenant: string,
  scope?: SettingScope,
  subject?: string,
): Promise<SettingRecord[]> {
  return rt.repos.settings.list(tenant, scope, subject);
}
