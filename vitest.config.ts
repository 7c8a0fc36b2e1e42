import { defineConfig } from 'vitest/config';

// Every suite runs with a host zone far from UTC, so a computation that leaks the process
// zone into cron or at: arithmetic fails here instead of in a user's deployment.
process.env.TZ = 'Australia/Sydney';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    env: { TZ: 'Australia/Sydney' },
    globalSetup: ['test/setup/postgres.ts'],
  },
});
