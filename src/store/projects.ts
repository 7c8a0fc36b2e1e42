import { sql } from 'kysely';
import { SCHEDULER_PREFIX } from '../scheduler/paths.js';
import type { Store } from './open.js';

/** Project lifecycle flags, the one-shot fired markers and when tenant one-shots were known (spec §3, §10a; decisions §5). */
export class Projects {
  constructor(private readonly store: Store) {}

  /** Suspends (or resumes) a project: a suspended project is not active, whatever it holds (spec §3). */
  async setSuspended(tenant: string, project: string, suspended: boolean, now: number): Promise<void> {
    await this.store.db
      .insertInto('projects')
      .values({ tenant, project, suspended: suspended ? 1 : 0, updated_at: now })
      .onConflict((oc) =>
        oc.columns(['tenant', 'project']).doUpdateSet({ suspended: suspended ? 1 : 0, updated_at: now }),
      )
      .execute();
  }

  async isSuspended(tenant: string, project: string): Promise<boolean> {
    const row = await this.store.db
      .selectFrom('projects')
      .select('suspended')
      .where('tenant', '=', tenant)
      .where('project', '=', project)
      .executeTakeFirst();
    return Number(row?.suspended ?? 0) === 1;
  }

  /** Every suspended project. */
  async suspended(): Promise<{ tenant: string; project: string }[]> {
    return this.store.db
      .selectFrom('projects')
      .select(['tenant', 'project'])
      .where('suspended', '=', 1)
      .execute();
  }

  /** Whether the one-shot `name` fired for the `at:` instant `at` (UTC epoch ms, spec §10a). */
  async hasFired(tenant: string, project: string, name: string, at: number): Promise<boolean> {
    const row = await this.store.db
      .selectFrom('oneshot_fires')
      .select('name')
      .where('tenant', '=', tenant)
      .where('project', '=', project)
      .where('name', '=', name)
      .where('at', '=', at)
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * The fired one-shots of (tenant, project), newest fire first, at most `limit`; with `name`, only
   * that scheduler's (spec §10a: a fired one-shot leaves the scheduler list, issue #23 finds it).
   * Each with its `at:` instant, the run that fired it and when its marker was written (UTC ms), and
   * where its document lies in the trash (null when it was restored, purged, or never trashed: a
   * `_tenant` one-shot's document stays).
   *
   * @throws a store error.
   */
  async fired(
    tenant: string,
    project: string,
    options: { readonly name?: string; readonly limit: number },
  ): Promise<FiredOneShot[]> {
    let query = this.store.db
      .selectFrom('oneshot_fires as f')
      .select(['f.name', 'f.at', 'f.correlation_id', 'f.fired_at'])
      // The first trashed document of its path since the fire: the one-shot's own, which the fire
      // trashed, not a later document of the same name deleted since.
      .select((eb) =>
        eb
          .selectFrom('documents as d')
          .select('d.path')
          .whereRef('d.tenant', '=', 'f.tenant')
          .whereRef('d.project', '=', 'f.project')
          .where('d.trashed_from', '=', sql<string>`${SCHEDULER_PREFIX} || f.name || '.yaml'`)
          .where('d.updated_at', '>=', eb.ref('f.fired_at'))
          .orderBy('d.updated_at', 'asc')
          .limit(1)
          .as('trash_path'),
      )
      .where('f.tenant', '=', tenant)
      .where('f.project', '=', project);
    if (options.name !== undefined) query = query.where('f.name', '=', options.name);
    const rows = await query.orderBy('f.fired_at', 'desc').orderBy('f.name').limit(options.limit).execute();
    return rows.map((r) => ({
      name: r.name,
      at: Number(r.at),
      correlationId: r.correlation_id,
      firedAt: Number(r.fired_at),
      trashPath: r.trash_path ?? null,
    }));
  }

  /** Writes the fired marker of a one-shot (idempotent: a second write for the same `at` changes nothing). */
  async markFired(
    tenant: string,
    project: string,
    name: string,
    at: number,
    correlationId: string,
    now: number,
  ): Promise<void> {
    await this.store.db
      .insertInto('oneshot_fires')
      .values({ tenant, project, name, at, correlation_id: correlationId, fired_at: now })
      .onConflict((oc) => oc.columns(['tenant', 'project', 'name', 'at']).doNothing())
      .execute();
  }

  /**
   * When Ursa first knew the `_tenant` one-shot `name` for the `at:` instant `at` (decisions §5):
   * the stored instant, or `knownAt` (UTC epoch ms) when none was stored, which this call then
   * stores. Concurrent callers all get the one instant stored first.
   */
  async knowTenantOneShot(tenant: string, name: string, at: number, knownAt: number): Promise<number> {
    const known = await this.tenantOneShotKnownAt(tenant, name, at);
    if (known !== undefined) return known;
    await this.store.db
      .insertInto('tenant_oneshots')
      .values({ tenant, name, at, known_at: knownAt })
      .onConflict((oc) => oc.columns(['tenant', 'name', 'at']).doNothing())
      .execute();
    return (await this.tenantOneShotKnownAt(tenant, name, at)) ?? knownAt;
  }

  /** When Ursa first knew the `_tenant` one-shot `name` for `at` (UTC epoch ms), if it is recorded. */
  async tenantOneShotKnownAt(tenant: string, name: string, at: number): Promise<number | undefined> {
    const row = await this.store.db
      .selectFrom('tenant_oneshots')
      .select('known_at')
      .where('tenant', '=', tenant)
      .where('name', '=', name)
      .where('at', '=', at)
      .executeTakeFirst();
    return row === undefined ? undefined : Number(row.known_at);
  }

  /**
   * Forgets when the `_tenant` one-shot `name` was known for `at` (it was disabled: enabled again,
   * it falls due anew, decisions §5).
   */
  async forgetTenantOneShot(tenant: string, name: string, at: number): Promise<void> {
    await this.store.db
      .deleteFrom('tenant_oneshots')
      .where('tenant', '=', tenant)
      .where('name', '=', name)
      .where('at', '=', at)
      .execute();
  }
}

/** A one-shot that fired (see {@link Projects.fired}). Instants are UTC ms. */
export interface FiredOneShot {
  readonly name: string;
  /** Its `at:` instant. */
  readonly at: number;
  /** The run that fired it. */
  readonly correlationId: string;
  /** When its fired marker was written. */
  readonly firedAt: number;
  /** Where its document lies in the trash; null when it is not there. */
  readonly trashPath: string | null;
}
