import { type RawBuilder, type SqlBool, sql } from 'kysely';
import type { StoreDialect } from './open.js';

/**
 * A list of rows both dialects read as a table whose columns are named `column1`, `column2`, …
 *
 * On PostgreSQL it is `unnest` of one array parameter per column, each cast to its kind: a batch
 * of a thousand rows is then a handful of parameters, where a `(values …)` list of them had the
 * query builder compile and the driver send thousands, one by one (about a sixth of a saturated
 * worker's CPU, issue #11). On SQLite it is a `(values (…), (…))` list bound without casts: a
 * cast makes SQLite materialize the list and scan the joined table once per row (1,000 claims
 * against 10,000 schedule states took a second), while plain values are looked up by the table's
 * key; the target columns' integer affinity converts the values where they meet.
 *
 * @param rows at least one row, every row as long as `kinds`.
 * @param kinds per column: `text` or `bigint` (the array type on PostgreSQL).
 */
export function valuesList(
  dialect: StoreDialect,
  rows: readonly (readonly unknown[])[],
  kinds: readonly ('text' | 'bigint')[],
): RawBuilder<unknown> {
  if (dialect === 'postgres') {
    const arrays = kinds.map((kind, i) => {
      const column = rows.map((row) => row[i]);
      return kind === 'bigint' ? sql`cast(${column} as bigint[])` : sql`cast(${column} as text[])`;
    });
    const names = kinds.map((_, i) => sql.raw(`column${i + 1}`));
    return sql`(select * from unnest(${sql.join(arrays)}) as u(${sql.join(names)}))`;
  }
  return sql`(values ${sql.join(rows.map((row) => sql`(${sql.join(row.map((value) => sql`${value}`))})`))})`;
}

/**
 * `(c1, c2, …) in (values (…), …)`: row-value membership. SQLite takes row values on the right
 * of IN only from a subquery, so the list is written as one.
 *
 * @param rows at least one row of text values, each as long as `columns`.
 */
export function rowIn(columns: readonly string[], rows: readonly (readonly string[])[]): RawBuilder<SqlBool> {
  const refs = sql.join(columns.map((c) => sql.ref(c)));
  const values = sql.join(rows.map((row) => sql`(${sql.join(row)})`));
  return sql<SqlBool>`(${refs}) in (select * from (values ${values}) as v)`;
}
