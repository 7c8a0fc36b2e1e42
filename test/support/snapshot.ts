import type { Store } from '../../src/store/index.js';

/** Every table that holds scheduling data (not `tokens` or `workers`, which track the caller and the worker). */
const TABLES = [
  'documents',
  'document_archive',
  'schedule_state',
  'runs',
  'sessions',
  'processes',
  'feed',
  'users',
  'inbox',
  'settings',
  'projects',
  'oneshot_fires',
  'workflow_runs',
  'workflow_steps',
  'audit_log',
] as const;

/** Each table's rows as sorted JSON lines. */
export type StoreSnapshot = Readonly<Record<(typeof TABLES)[number], readonly string[]>>;

/**
 * Everything the store holds, row by row, so a test can assert that a refused request changed
 * nothing at all (decisions §6: bad input never half-writes): `expect(await snapshot(s)).toEqual(before)`.
 */
export async function snapshot(store: Store): Promise<StoreSnapshot> {
  const out: Partial<Record<(typeof TABLES)[number], readonly string[]>> = {};
  for (const table of TABLES) {
    const rows = await store.db.selectFrom(table).selectAll().execute();
    out[table] = rows
      .map((row) => JSON.stringify(row, (_key, value) => (typeof value === 'bigint' ? String(value) : value)))
      .sort();
  }
  return out as StoreSnapshot;
}
