import fc from 'fast-check';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/open.js';
import { FEED_COLUMNS } from '../../src/store/row-kinds.js';
import { insertRows } from '../../src/store/values.js';
import { DIALECTS, freshDatabase, type TestDatabase } from '../support/dialects.js';

// Issue #24: a run's rows go in many to a statement, on PostgreSQL as one array literal per
// column that Ursa writes itself. Whatever text a run log, a reason or a process's output holds
// (quotes, backslashes, braces, commas, the word NULL, non-ASCII) must come back as it went in,
// and a missing value as null.

const made: { db: TestDatabase; store: Store }[] = [];
afterEach(async () => {
  for (const { db, store } of made.splice(0)) {
    await store.close();
    await db.drop();
  }
});

const TRICKY = ['', 'NULL', 'null', '"', '\\', '\\"', '{a,b}', ' spaced ', 'a,b', '{', '}', 'é✓😀', '\n\t'];

describe.each(DIALECTS)('rows inserted in bulk, on %s', (dialect) => {
  async function store(): Promise<Store> {
    const db = await freshDatabase(dialect);
    const opened = await openStore(db.location);
    made.push({ db, store: opened });
    return opened;
  }

  it('come back exactly as they went in, text of any characters and nulls included', async () => {
    const s = await store();
    const text = fc.oneof(
      fc.constantFrom(...TRICKY),
      fc.string({ unit: 'binary' }).map((t) => t.replaceAll('\u0000', '')),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({ payload: text, logPath: fc.option(text), at: fc.integer({ min: 0, max: 2 ** 52 }) }),
          {
            minLength: 1,
            maxLength: 20,
          },
        ),
        async (lines) => {
          await sql`delete from feed`.execute(s.db);
          const rows = lines.map((line, i) => ({
            tenant: 'acme',
            project: 'ops',
            at: line.at,
            kind: 'START',
            ref_type: 'run',
            ref_id: `r${i}`,
            trace_id: 't',
            outcome: 'pending',
            ...(line.logPath === null ? {} : { log_path: line.logPath }),
            payload: line.payload,
          }));
          await insertRows(s.db, s.dialect, 'feed', FEED_COLUMNS, rows);
          const back = await s.db
            .selectFrom('feed')
            .select(['ref_id', 'at', 'log_path', 'payload'])
            .orderBy('id')
            .execute();
          expect(back.map((r) => ({ ...r, at: Number(r.at) }))).toEqual(
            rows.map((r) => ({
              ref_id: r.ref_id,
              at: r.at,
              log_path: 'log_path' in r ? r.log_path : null,
              payload: r.payload,
            })),
          );
        },
      ),
      { numRuns: 40 },
    );
  });

  // A claim after an outage writes two rows for each of a thousand schedulers: more parameters
  // than one SQLite statement may bind (32,766).
  it('go in however many there are, and return what every statement returned', async () => {
    const s = await store();
    const rows = Array.from({ length: 4000 }, (_, i) => ({
      tenant: 'acme',
      project: 'ops',
      at: i,
      kind: 'START',
      ref_type: 'run',
      ref_id: `r${i}`,
      trace_id: 't',
      outcome: 'pending',
      log_path: null,
      payload: '{}',
    }));
    const returned = await insertRows<(typeof rows)[number], { ref_id: string }>(
      s.db,
      s.dialect,
      'feed',
      FEED_COLUMNS,
      rows,
      sql`returning ref_id`,
    );
    expect(returned.map((r) => r.ref_id).sort()).toEqual(rows.map((r) => r.ref_id).sort());
    const count = await s.db
      .selectFrom('feed')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirst();
    expect(Number(count?.n)).toBe(4000);
  });
});
