import type { CreateTableBuilder } from 'kysely';
import type { StoreDialect } from '../open.js';

/** An `id` primary key numbered by the database: `integer … autoincrement` on SQLite, `serial` on PostgreSQL. */
export function autoIncrementId(dialect: StoreDialect) {
  return <T extends string>(table: CreateTableBuilder<T, never>) =>
    dialect === 'postgres'
      ? table.addColumn('id', 'serial', (c) => c.primaryKey())
      : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}
