import type { Store } from './open.js';

/** Project lifecycle flags and the one-shot fired markers (spec §3, §10a). */
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
}
