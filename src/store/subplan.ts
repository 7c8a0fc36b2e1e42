import { type RawBuilder, sql } from 'kysely';
import type { StoreDialect } from './open.js';

/**
 * The fence that keeps a correlated `exists` a subplan (issue #24): appended to the subquery as
 * `offset 0` on PostgreSQL, which then does not flatten it into a join, and probes the index by
 * the outer row's key for each row instead. Flattened, the join's plan rests on statistics: on a
 * young `runs` table (stale statistics) the planner chose to walk every active run for each row,
 * seconds per batch of starts. SQLite always runs a correlated subquery per row: nothing there.
 */
export function subplanFence(dialect: StoreDialect): RawBuilder<unknown> {
  return dialect === 'postgres' ? sql`offset 0` : sql``;
}

/** {@link subplanFence} for a Kysely subquery: `.$call(asSubplan(dialect))`. */
export function asSubplan(dialect: StoreDialect) {
  return <Q extends { offset(n: number): Q }>(query: Q): Q =>
    dialect === 'postgres' ? query.offset(0) : query;
}
