import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const rootDir = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Everyday schedules, so that the corpus is not only the edge cases the vectors are made of.
 * Spring syntax, which Ursa reads; a peer that reads one differently shows up as a difference.
 */
const COMMON = [
  ['every second', '* * * * * *'],
  ['every 5 minutes', '0 */5 * * * *'],
  ['quarter hours', '0 0,15,30,45 * * * *'],
  ['every 15 minutes in office hours', '0 */15 9-17 * * MON-FRI'],
  ['hourly', '0 0 * * * *'],
  ['daily at 02:30', '0 30 2 * * *'],
  ['daily macro', '@daily'],
  ['weekdays at 09:00', '0 0 9 * * MON-FRI'],
  ['weekly on Sunday', '0 0 0 * * SUN'],
  ['monthly on the 1st at noon', '0 0 12 1 * *'],
  ['monthly on the last day', '0 0 23 L * *'],
  ['first Monday of the month', '0 0 8 ? * MON#1'],
  ['yearly', '0 0 0 1 1 *'],
];

const COMMON_ZONES = ['UTC', 'Europe/Berlin', 'America/New_York'];

/** An ordinary day, the night Berlin springs forward, and the night New York falls back. */
const COMMON_STARTS = ['2025-01-15T12:34:56Z', '2026-03-29T00:30:00Z', '2026-11-01T05:30:00Z'];

/** The reference vectors, from the folder the tests read (test/cases/, or URSA_CASES_DIR). */
function loadVectors() {
  const dir = process.env.URSA_CASES_DIR ?? resolve(rootDir, 'test/cases');
  const file = resolve(dir, 'cron-vectors.json');
  const { cases } = JSON.parse(readFileSync(file, 'utf8'));
  if (!Array.isArray(cases) || cases.length === 0) throw new Error(`no cases in ${file}`);
  return cases;
}

function entry(id, expr, zone, from) {
  const fromMs = Date.parse(from);
  if (Number.isNaN(fromMs)) throw new Error(`${id}: bad start instant ${from}`);
  return { id, expr, zone, from, fromMs };
}

/**
 * The fixed corpus: every valid reference vector (expr, zone, from), then the common schedules in
 * each zone from each start. The same input gives the same corpus, in the same order.
 */
export function loadCorpus() {
  const vectors = loadVectors()
    .filter((v) => !v.error)
    .map((v) => entry(v.id, v.expr, v.zone, v.from));
  const common = [];
  for (const [label, expr] of COMMON) {
    for (const zone of COMMON_ZONES) {
      for (const from of COMMON_STARTS) common.push(entry(`${label} | ${zone} | ${from}`, expr, zone, from));
    }
  }
  return { entries: [...vectors, ...common], vectors: vectors.length, common: common.length };
}
