import { type RawBuilder, type SqlBool, sql } from 'kysely';
import type { StoreDialect } from './open.js';

/**
 * A `(values (…), (…))` list both dialects read as a table whose columns are named `column1`,
 * `column2`, … (the one naming SQLite and PostgreSQL share). On PostgreSQL integer columns are
 * cast to `bigint`, so that it types a column that starts with a null. On SQLite they are bound
 * as they are: a cast makes SQLite materialize the list and scan the joined table once per row
 * (1,000 claims against 10,000 schedule states took a second), while plain values are looked up
 * by the table's key; the target columns' integer affinity converts the values where they meet.
 *
 * @param rows at least one row, every row as long as `kinds`.
 * @param kinds per column: `text` (bound as is) or `bigint` (cast on PostgreSQL).
 */
export function valuesList(
  dialect: StoreDialect,
  rows: readonly (readonly unknown[])[],
  kinds: readonly ('text' | 'bigint')[],
): RawBuilder<unknown> {
  const cast = (value: unknown, i: number) =>
    dialect === 'postgres' && kinds[i] === 'bigint' ? sql`cast(${value} as bigint)` : sql`${value}`;
  return sql`(values ${sql.join(rows.map((row) => sql`(${sql.join(row.map(cast))})`))})`;
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
