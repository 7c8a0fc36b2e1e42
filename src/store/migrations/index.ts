import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './0001-initial.js';

/**
 * Versioned migrations, in code so the built package needs no migration folder at run time.
 * Names sort in the order they apply; a released migration is never edited, only followed.
 */
export const migrations: MigrationProvider = {
  async getMigrations(): Promise<Record<string, Migration>> {
    return { '0001-initial': initial };
  },
};
