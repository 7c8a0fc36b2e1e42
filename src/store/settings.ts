import type { Store } from './open.js';

/** Where a setting lives (decisions §2): a user's, the tenant's, or a project's (`_tenant` for all projects). */
export type SettingScope = 'user' | 'tenant' | 'project';

/** One stored setting; `value` is text. */
export interface SettingRecord {
  readonly tenant: string;
  readonly scope: SettingScope;
  /** The user or project; '' for the tenant. */
  readonly subject: string;
  readonly key: string;
  readonly value: string;
}

/** Settings rows; the cascades that read them are in `setting-cascades.ts`. */
export class Settings {
  constructor(private readonly store: Store) {}

  async get(tenant: string, scope: SettingScope, subject: string, key: string): Promise<string | undefined> {
    const row = await this.store.db
      .selectFrom('settings')
      .select('value')
      .where('tenant', '=', tenant)
      .where('scope', '=', scope)
      .where('subject', '=', subject)
      .where('key', '=', key)
      .executeTakeFirst();
    return row?.value;
  }

  async set(setting: SettingRecord, now: number): Promise<void> {
    await this.store.db
      .insertInto('settings')
      .values({ ...setting, updated_at: now })
      .onConflict((oc) =>
        oc
          .columns(['tenant', 'scope', 'subject', 'key'])
          .doUpdateSet({ value: setting.value, updated_at: now }),
      )
      .execute();
  }

  async remove(tenant: string, scope: SettingScope, subject: string, key: string): Promise<boolean> {
    const result = await this.store.db
      .deleteFrom('settings')
      .where('tenant', '=', tenant)
      .where('scope', '=', scope)
      .where('subject', '=', subject)
      .where('key', '=', key)
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  /** Settings of a tenant, optionally of one scope and subject, sorted. */
  async list(tenant: string, scope?: SettingScope, subject?: string): Promise<SettingRecord[]> {
    let query = this.store.db
      .selectFrom('settings')
      .select(['tenant', 'scope', 'subject', 'key', 'value'])
      .where('tenant', '=', tenant);
    if (scope !== undefined) query = query.where('scope', '=', scope);
    if (subject !== undefined) query = query.where('subject', '=', subject);
    const rows = await query.orderBy('scope').orderBy('subject').orderBy('key').execute();
    return rows.map((r) => ({ ...r, scope: r.scope as SettingScope }));
  }

  /** Projects whose setting `key` has `value` (e.g. the pinned ones: `lifecycleType` = `PERMANENT`). */
  async projectsWith(key: string, value: string): Promise<{ tenant: string; project: string }[]> {
    const rows = await this.store.db
      .selectFrom('settings')
      .select(['tenant', 'subject'])
      .where('scope', '=', 'project')
      .where('key', '=', key)
      .where('value', '=', value)
      .execute();
    return rows.map((r) => ({ tenant: r.tenant, project: r.subject }));
  }
}
