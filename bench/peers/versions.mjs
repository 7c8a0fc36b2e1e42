import { readFileSync } from 'node:fs';

/** The installed version of a benchmark dependency (bench/node_modules), for the report. */
export function versionOf(name) {
  const file = new URL(`../node_modules/${name}/package.json`, import.meta.url);
  return JSON.parse(readFileSync(file, 'utf8')).version;
}
