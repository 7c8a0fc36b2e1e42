import type { Kysely } from 'kysely';

// Decisions §5 (issue #20): a `_tenant` one-shot fires in the projects active when it falls due
// and never later in one that becomes active afterwards. When it falls due is its `at:`, or, for
// one written already past, the instant Ursa first knew it: that instant is kept here, per
// (tenant, scheduler name, `at:` instant), because no document version or project state says it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('tenant_oneshots')
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('known_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('tenant_oneshots_pk', ['tenant', 'name', 'at'])
    .execute();
  // Tenant one-shots registered or fired before this migration fell due at their `at:` at the
  // latest as far as any project activated since is concerned: it must not run them as a catch-up.
  const trx = db as Kysely<Backfill>;
  const registered = await trx
    .selectFrom('schedule_state')
    .select(['tenant', 'name', 'timing'])
    .where('source', '=', 'tenant')
    .execute();
  const tenantSchedulers = await trx
    .selectFrom('documents')
    .select(['tenant', 'path'])
    .where('project', '=', '_tenant')
    .where('path', 'like', '_vance/scheduler/%')
    .execute();
  const shared = new Set(tenantSchedulers.map((d) => `${d.tenant}\u0000${d.path}`));
  const fired = (await trx.selectFrom('oneshot_fires').select(['tenant', 'name', 'at']).execute()).filter(
    (f) => shared.has(`${f.tenant}\u0000_vance/scheduler/${f.name}.yaml`),
  );
  const rows = new Map<string, { tenant: string; name: string; at: number; known_at: number }>();
  const add = (tenant: string, name: string, at: number) =>
    rows.set(`${tenant}\u0000${name}\u0000${at}`, { tenant, name, at, known_at: at });
  for (const { tenant, name, timing } of registered) {
    const at = atOf(timing);
    if (at !== undefined) add(tenant, name, at);
  }
  for (const { tenant, name, at } of fired) add(tenant, name, Number(at));
  const values = [...rows.values()];
  for (let i = 0; i < values.length; i += 500)
    await trx
      .insertInto('tenant_oneshots')
      .values(values.slice(i, i + 500))
      .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('tenant_oneshots').execute();
}

/** The `at:` instant of a stored timing (`registrar.timingOf`: `{"at":<ms>,…}`), if it is a one-shot's. */
function atOf(timing: string | null): number | undefined {
  if (timing === null || !timing.startsWith('{"at"')) return undefined;
  try {
    const at = (JSON.parse(timing) as { at?: unknown }).at;
    return typeof at === 'number' && Number.isSafeInteger(at) ? at : undefined;
  } catch {
    return undefined;
  }
}

// The tables as this migration reads and writes them.
interface Backfill {
  schedule_state: { tenant: string; name: string; source: string; timing: string | null };
  oneshot_fires: { tenant: string; name: string; at: number };
  documents: { tenant: string; project: string; path: string };
  tenant_oneshots: { tenant: string; name: string; at: number; known_at: number };
}
