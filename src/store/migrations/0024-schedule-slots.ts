import { type Kysely, sql } from 'kysely';
import { slotOf } from '../../decisions/partition.js';

const PAGE = 5000;

// Issue #24: each scheduler's slot (decisions/partition.ts), so that a worker's claim reads only
// the schedulers of the slots it owns. Computed here for the states that exist; `Schedules.upsert`
// writes it for new ones. The slot function is frozen with this migration. The index on the next
// occurrence gains the key, so that a worker preparing a top of the hour pages through the
// schedulers due at one instant by index instead of sorting them all for every page.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table schedule_state add column slot integer not null default 0`.execute(db);
  const typed = db as Kysely<{
    schedule_state: { tenant: string; project: string; name: string; slot: number };
  }>;
  let after: { tenant: string; project: string; name: string } | undefined;
  for (;;) {
    let page = typed.selectFrom('schedule_state').select(['tenant', 'project', 'name']);
    if (after !== undefined) {
      const { tenant, project, name } = after;
      page = page.where(sql<boolean>`(tenant, project, name) > (${tenant}, ${project}, ${name})`);
    }
    const rows = await page.orderBy('tenant').orderBy('project').orderBy('name').limit(PAGE).execute();
    if (rows.length === 0) break;
    const bySlot = new Map<number, typeof rows>();
    for (const row of rows) {
      const slot = slotOf(row);
      if (slot === 0) continue;
      const keys = bySlot.get(slot);
      if (keys === undefined) bySlot.set(slot, [row]);
      else keys.push(row);
    }
    for (const [slot, keys] of bySlot) {
      await typed
        .updateTable('schedule_state')
        .set({ slot })
        .where((eb) =>
          eb(
            eb.refTuple('tenant', 'project', 'name'),
            'in',
            keys.map((k) => eb.tuple(k.tenant, k.project, k.name)),
          ),
        )
        .execute();
    }
    after = rows[rows.length - 1];
  }
  await db.schema
    .createIndex('schedule_state_upcoming')
    .on('schedule_state')
    .columns(['next_run_at', 'tenant', 'project', 'name'])
    .execute();
  await db.schema.dropIndex('schedule_state_next_run_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('schedule_state_next_run_at')
    .on('schedule_state')
    .column('next_run_at')
    .execute();
  await db.schema.dropIndex('schedule_state_upcoming').execute();
  await sql`alter table schedule_state drop column slot`.execute(db);
}
