import SQLite from 'better-sqlite3';
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

const bodyOf = (cron, zone) =>
  `description: scale benchmark\ncron: "${cron}"\ntimezone: ${zone}\nrecipe: noop\n`;

/**
 * Writes `count` scheduler documents and their schedule state into a fresh store at `location`,
 * as a store that has run for a while holds them (registered at `at`, UTC ms), spread over 1,000
 * projects of tenant `default`. Rows are written directly with prepared statements in one transaction (one parse per
 * distinct body, not per row): seeding a million through `apply` would take longer than everything
 * measured.
 */
export async function seed(location, count, at) {
  const bodies = [];
  for (const cron of CRONS)
    for (const zone of ZONES) {
      const body = bodyOf(cron, zone);
      const definition = parseSchedulerDocument(body, { name: 'seed', path: 'seed.yaml' });
      bodies.push({ body, timing: timingOf(definition), nextRunAt: firstRunAt(definition, at) });
    }
  // The schema through Ursa's own migrations; then the rows through one prepared statement per
  // table in one transaction (Kysely would compile a statement of 10,000 values per chunk).
  await (await openStore(location)).close();
  const database = new SQLite(location);
  try {
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = OFF');
    database
      .prepare('insert into users (tenant, name, display_timezone, created_at) values (?, ?, null, ?)')
      .run('default', 'bench', at);
    const insertDocument = database.prepare(
      `insert into documents (tenant, project, path, body, created_by, version, created_at, updated_at, expires_at, trashed_from)
       values ('default', ?, ?, ?, 'bench', 1, ?, ?, null, null)`,
    );
    const insertState = database.prepare(
      `insert into schedule_state (tenant, project, name, source, document_version, next_run_at, last_scheduled_at, updated_at, timing)
       values ('default', ?, ?, 'project', 1, ?, null, ?, ?)`,
    );
    // Project by project, so that the rows arrive nearly in key order.
    database.transaction(() => {
      for (let p = 0; p < Math.min(PROJECTS, count); p++) {
        const project = `p${String(p).padStart(4, '0')}`;
        for (let i = p; i < count; i += PROJECTS) {
          const { body, timing, nextRunAt } = bodies[i % bodies.length];
          const name = `s${i}`;
          insertDocument.run(project, `_vance/scheduler/${name}.yaml`, body, at, at);
          insertState.run(project, name, nextRunAt, at, timing);
        }
      }
    })();
  } finally {
    database.close();
  }
}
