import { firstRunAt } from '../../dist/decisions/advance.js';
import { timingOf } from '../../dist/runtime/registrar.js';
import { parseSchedulerDocument } from '../../dist/scheduler/document.js';
import { openStore } from '../../dist/store/open.js';

/** The mix of expressions and zones the schedulers are made of (scheduler i takes entry i mod n). */
const CRONS = [
  '0 */5 * * * *',
  '0 0 * * * *',
  '0 30 9 * * MON-FRI',
  '0 0 0 1 * *',
  '15 */15 * * * *',
  '0 0 2 * * SUN',
];
const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Tokyo', 'Australia/Sydney'];
const PROJECTS = 1000;
const CHUNK = 1000;

const bodyOf = (cron, zone) =>
  `description: scale benchmark\ncron: "${cron}"\ntimezone: ${zone}\nrecipe: noop\n`;

/**
 * Writes `count` scheduler documents and their schedule state into a fresh store at `location`,
 * as a store that has run for a while holds them (registered at `at`, UTC ms), spread over 1,000
 * projects of tenant `default`. Rows are written directly (one parse per distinct body, not per
 * row): seeding a million through `apply` would take longer than everything measured.
 */
export async function seed(location, count, at) {
  const bodies = [];
  for (const cron of CRONS)
    for (const zone of ZONES) {
      const body = bodyOf(cron, zone);
      const definition = parseSchedulerDocument(body, { name: 'seed', path: 'seed.yaml' });
      bodies.push({ body, timing: timingOf(definition), nextRunAt: firstRunAt(definition, at) });
    }
  const store = await openStore(location);
  try {
    await store.db
      .insertInto('users')
      .values({ tenant: 'default', name: 'bench', display_timezone: null, created_at: at })
      .execute();
    for (let from = 0; from < count; from += CHUNK) {
      const documents = [];
      const states = [];
      for (let i = from; i < Math.min(count, from + CHUNK); i++) {
        const { body, timing, nextRunAt } = bodies[i % bodies.length];
        const project = `p${String(i % PROJECTS).padStart(4, '0')}`;
        const name = `s${i}`;
        documents.push({
          tenant: 'default',
          project,
          path: `_vance/scheduler/${name}.yaml`,
          body,
          created_by: 'bench',
          version: 1,
          created_at: at,
          updated_at: at,
          expires_at: null,
          trashed_from: null,
        });
        states.push({
          tenant: 'default',
          project,
          name,
          source: 'project',
          document_version: 1,
          next_run_at: nextRunAt,
          last_scheduled_at: null,
          updated_at: at,
          timing,
        });
      }
      await store.db.transaction().execute(async (trx) => {
        await trx.insertInto('documents').values(documents).execute();
        await trx.insertInto('schedule_state').values(states).execute();
      });
    }
  } finally {
    await store.close();
  }
}
