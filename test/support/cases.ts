import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One reference vector of `test/cases/cron-vectors.json` (see its README). */
export interface CronVector {
  id: string;
  source: string;
  expr: string | null;
  zone: string;
  from: string;
  expected: string[] | null;
  error: boolean;
  spring?: string[] | null;
  reason?: string;
  tags: string[];
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The folder of the reference vectors: the copy in `test/cases/` (see its SOURCE.md), or `URSA_CASES_DIR`. */
export function casesDir(): string {
  return process.env.URSA_CASES_DIR ?? resolve(repoRoot, 'test/cases');
}

/**
 * The reference vectors, read from the file (never copied into code) in {@link casesDir}. A
 * missing file fails loudly.
 */
export function loadCronVectors(): CronVector[] {
  const file = resolve(casesDir(), 'cron-vectors.json');
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { cases: CronVector[] };
  if (!Array.isArray(parsed.cases) || parsed.cases.length === 0) throw new Error(`no cases in ${file}`);
  return parsed.cases;
}

/** ISO-8601 UTC, whole seconds without a fraction (the vectors' format). */
export function iso(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}
