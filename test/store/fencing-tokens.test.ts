import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { takeFencingTokens } from '../../src/store/fencing.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/open.js';
import { DIALECTS, freshDatabase, type TestDatabase } from '../support/dialects.js';

// Decisions §5 and spec §10b: each scheduler counts its own fencing tokens, so that the tokens in
// one scheduler's run logs tell nothing of the attempts of any other (a hidden one's, another
// tenant's), while a scheduler's attempts still carry ever larger tokens.

const made: { db: TestDatabase; store: Store }[] = [];
afterEach(async () => {
  for (const { db, store } of made.splice(0)) {
    await store.close();
    await db.drop();
  }
});

const A = { tenant: 'acme', project: 'ops', name: 'nightly' };
const B = { tenant: 'umbrella', project: 'lab', name: 'hourly' };

describe.each(DIALECTS)('fencing tokens per scheduler, on %s', (dialect) => {
  async function store(): Promise<Store> {
    const db = await freshDatabase(dialect);
    const opened = await openStore(db.location);
    made.push({ db, store: opened });
    return opened;
  }
  const take = (s: Store, keys: (typeof A)[]) =>
    s.db.transaction().execute((trx) => takeFencingTokens(trx, s.dialect, keys));

  it("counts each scheduler's attempts alone: another's starts move none of its tokens", async () => {
    const s = await store();
    expect(await take(s, [A])).toEqual([1]);
    for (let i = 0; i < 5; i++) await take(s, [B]);
    expect(await take(s, [A, B])).toEqual([2, 6]);
    expect(await take(s, [A])).toEqual([3]);
  });

  it('starts every scheduler above the tokens the store gave out before it counted per scheduler', async () => {
    const s = await store();
    if (dialect === 'postgres') await sql`select setval('run_fencing_token', 41)`.execute(s.db);
    else await sql`update fencing_counter set last_token = 41`.execute(s.db);
    expect(await take(s, [A, B])).toEqual([42, 42]);
    expect(await take(s, [A])).toEqual([43]);
  });

  it('refuses a scheduler named twice in one take, and takes nothing', async () => {
    const s = await store();
    await expect(take(s, [A, A])).rejects.toThrow();
    expect(await take(s, [A])).toEqual([1]);
  });
});
