import { fileURLToPath } from 'node:url';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

// Every suite runs with a host zone far from UTC, so a computation that leaks the process
// zone into cron or at: arithmetic fails here instead of in a user's deployment.
process.env.TZ = 'Australia/Sydney';

/**
 * The test folders of the unit project: tests of pure modules that open no database, start no
 * worker and need no `dist/` build, so `npm run test:unit` takes seconds. A test file belongs to
 * the project of its folder; every folder not listed here is the integration project's. A store
 * test put here fails loudly: `freshDatabase` refuses in this project, `better-sqlite3` and `pg`
 * resolve to test/setup/no-database.ts (which throws on use), and no `pgUrl` is provided.
 */
export const UNIT_FOLDERS = [
  'config',
  'contract',
  'cron',
  'decisions',
  'doctor',
  'errors',
  'recipes',
  'runs',
  'scheduler',
  'shape',
  'time',
  'workflows',
  'yaml',
] as const;

const unitFiles = UNIT_FOLDERS.map((folder) => `test/${folder}/**/*.test.ts`);

const shared = {
  env: { TZ: 'Australia/Sydney' },
  setupFiles: ['test/setup/temp-dirs.ts'],
  // Limits against a hung test, not speed checks (speed is measured in `npm run bench`): many
  // tests start worker processes and restart stores, and CI's two cores run every file at once.
  testTimeout: 60_000,
  hookTimeout: 60_000,
} satisfies TestProjectInlineConfiguration['test'];

const noDatabase = fileURLToPath(new URL('./test/setup/no-database.ts', import.meta.url));

export default defineConfig({
  test: {
    // The root's global setup runs once for the whole run, whichever projects are selected.
    globalSetup: ['test/setup/tmpdir.ts'],
    projects: [
      {
        resolve: { alias: { 'better-sqlite3': noDatabase, pg: noDatabase } },
        test: {
          ...shared,
          env: { ...shared.env, URSA_TEST_PROJECT: 'unit' },
          name: 'unit',
          include: unitFiles,
        },
      },
      {
        test: {
          ...shared,
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: ['**/node_modules/**', ...unitFiles],
          globalSetup: ['test/setup/postgres.ts'],
        },
      },
    ],
  },
});
