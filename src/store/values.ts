import { type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';
import type { StoreDialect } from './open.js';
import type { Database } from './schema.js';

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
      const column = arrayLiteral(rows, i);
      return kind === 'bigint' ? sql`cast(${column} as bigint[])` : sql`cast(${column} as text[])`;
    });
    const names = kinds.map((_, i) => sql.raw(`column${i + 1}`));
    return sql`(select * from unnest(${sql.join(arrays)}) as u(${sql.join(names)}))`;
  }
  return sql`(values ${valueRows(rows)})`;
}

// `(…), (…)`: the rows of a SQLite `values` list, each value a parameter, as the one template
// whose fragments sit between them: a template per value, joined per row and then per list, cost
// a SQLite worker a fifth of its CPU at a top of the hour to build and compile (issue #24).
function valueRows(rows: readonly (readonly unknown[])[]): RawBuilder<unknown> {
  const fragments: string[] = [];
  const values: unknown[] = [];
  let text = '(';
  for (const [r, row] of rows.entries())
    for (const [c, value] of row.entries()) {
      if (c > 0) text += ', ';
      else if (r > 0) text += '), (';
      fragments.push(text);
      values.push(value);
      text = '';
    }
  fragments.push(`${text})`);
  return sql(Object.assign(fragments, { raw: fragments }), ...values);
}

// Characters an element of an array literal must escape with a backslash.
const ARRAY_SPECIAL = /["\\]/;
const ARRAY_ESCAPE = /["\\]/g;

// Column `i` of `rows` as a PostgreSQL array literal (`{"a",NULL,"b"}`), sent as one text
// parameter: the driver's own array encoding ran two replacements over every element, a tenth of
// a saturated worker's CPU once run logs went in as arrays (issue #24). Every element is quoted;
// null and undefined are NULL.
function arrayLiteral(rows: readonly (readonly unknown[])[], i: number): string {
  let literal = '{';
  for (const [n, row] of rows.entries()) {
    const value = row[i];
    if (n > 0) literal += ',';
    if (value === null || value === undefined) literal += 'NULL';
    else {
      const text = String(value);
      literal += `"${ARRAY_SPECIAL.test(text) ? text.replace(ARRAY_ESCAPE, '\\$&') : text}"`;
    }
  }
  return `${literal}}`;
}

/**
 * `column` is one of `keys` (text): on PostgreSQL `= any` of one array parameter, on SQLite
 * `in (…)` of one parameter each. A lookup by a table's key written so: PostgreSQL's planner
 * counts a row against the whole list, so a scan of the table is never the cheaper plan.
 *
 * @param keys at least one key.
 */
export function keyIn(
  dialect: StoreDialect,
  column: RawBuilder<unknown>,
  keys: readonly string[],
): RawBuilder<SqlBool> {
  if (dialect === 'postgres')
    return sql<SqlBool>`${column} = any(cast(${arrayLiteral(
      keys.map((k) => [k]),
      0,
    )} as text[]))`;
  return sql<SqlBool>`${column} in (${sql.join(keys)})`;
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

/** How {@link insertRows} sends each column of a table's rows: one of {@link valuesList}'s kinds. */
export type ColumnKinds<R> = { readonly [K in keyof R]-?: 'text' | 'bigint' };

/** Most parameters one SQLite statement of {@link insertRows} binds: below SQLite's 32,766. */
const SQLITE_PARAMETERS = 30_000;

/**
 * Inserts `rows` into `table`: `insert into <table> (<columns>) … <tail>`, where `tail` is what
 * follows the rows (`on conflict …`, `returning …`). On PostgreSQL one statement, the rows
 * selected from {@link valuesList}, whose parameters are one array per column, not one per cell;
 * on SQLite plain `values` lists, which it inserts without first copying them into a table of its
 * own, as many statements as its limit on parameters needs (a claim after an outage writes two
 * rows for each of a thousand schedulers). Every column of `kinds` is written, an undefined value
 * as null: a column's default does not apply (issue #24).
 *
 * @returns the rows `tail` returns, of every statement.
 */
export async function insertRows<R, Returned = never>(
  db: Kysely<Database>,
  dialect: StoreDialect,
  table: keyof Database & string,
  kinds: ColumnKinds<R>,
  rows: readonly R[],
  tail: RawBuilder<unknown> = sql``,
): Promise<Returned[]> {
  if (rows.length === 0) return [];
  const columns = Object.keys(kinds) as (keyof R & string)[];
  const values = rows.map((row) => columns.map((column) => row[column] ?? null));
  const target = sql`insert into ${sql.table(table)} (${sql.join(columns.map((column) => sql.ref(column)))})`;
  if (dialect === 'postgres') {
    const list = valuesList(
      dialect,
      values,
      columns.map((column) => kinds[column]),
    );
    return (await sql<Returned>`${target} select * from ${list} as v ${tail}`.execute(db)).rows;
  }
  const returned: Returned[] = [];
  const chunk = Math.max(1, Math.floor(SQLITE_PARAMETERS / columns.length));
  for (let from = 0; from < values.length; from += chunk) {
    const part = values.slice(from, from + chunk);
    returned.push(...(await sql<Returned>`${target} values ${valueRows(part)} ${tail}`.execute(db)).rows);
  }
  return returned;
}
