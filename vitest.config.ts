import { defineConfig } from 'vitest/config';

// Every suite runs with a host zone far from UTC, so a computation that leaks the process
// zone into cron or at: arithmetic fails here instead of in a user's deployment.
process.env.TZ = 'Australia/Sydney';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    env: { TZ: 'Australia/Sydney' },
    globalSetup: ['test/setup/postgres.ts'],
    // Limits against a hung test, not speed checks (speed is measured in `npm run bench`): many
    // tests start worker processes and restart stores, and CI's two cores run every file at once.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
