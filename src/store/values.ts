import { type RawBuilder, type SqlBool, sql } from 'kysely';

/**
 * A `(values (…), (…))` list both dialects read as a table whose columns are named `column1`,
 * `column2`, … (the one naming SQLite and PostgreSQL share). Integer columns are cast to
 * `bigint` so that PostgreSQL types a column that starts with a null, and SQLite compares
 * integers with integers.
 *
 * @param rows at least one row, every row as long as `kinds`.
 * @param kinds per column: `text` (bound as is) or `bigint` (cast).
 */
export function valuesList(
  rows: readonly (readonly unknown[])[],
  kinds: readonly ('text' | 'bigint')[],
): RawBuilder<unknown> {
  return sql`(values ${sql.join(
    rows.map(
      (row) =>
        sql`(${sql.join(row.map((value, i) => (kinds[i] === 'bigint' ? sql`cast(${value} as bigint)` : sql`${value}`)))})`,
    ),
  )})`;
}

/**
 * `(c1, c2, …) in (values (…), …)`: row-value membership. SQLite takes row values on the right
 * of IN only from a subquery, so the list is written as one.
 *
 * @param rows at least one row of text values, each as long as `columns`.
 */
export function rowIn(columns: readonly string[], rows: readonly (readonly string[])[]): RawBuilder<SqlBool> {
  const refs = sql.join(columns.map((c) => sql.ref(c)));
  return sql<SqlBool>`(${refs}) in (select * from ${valuesList(
    rows,
    columns.map(() => 'text'),
  )} as v)`;
}
