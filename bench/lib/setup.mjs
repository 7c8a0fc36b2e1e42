import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const benchDir = fileURLToPath(new URL('..', import.meta.url));
const rootDir = fileURLToPath(new URL('../..', import.meta.url));

/** Runs a command with its output on stderr, so that stdout stays clean for `--json`. */
function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, stdio: ['ignore', 2, 2] });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed with exit code ${result.status}`);
  }
}

function readJson(path) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/**
 * True when bench/node_modules matches bench/package-lock.json. npm writes the installed tree to
 * node_modules/.package-lock.json, so comparing the two lists catches a missing or stale install
 * without trusting file times (a checkout does not order them).
 */
function dependenciesCurrent() {
  const installedFile = `${benchDir}node_modules/.package-lock.json`;
  if (!existsSync(installedFile)) return false;
  const wanted = readJson(`${benchDir}package-lock.json`).packages;
  const installed = readJson(installedFile).packages;
  const key = (entry) => `${entry?.version} ${entry?.integrity}`;
  // Optional packages for other platforms (msgpackr's prebuilt binaries, say) are never installed.
  const paths = Object.keys(wanted).filter(
    (path) => path !== '' && !(wanted[path].optional && installed[path] === undefined),
  );
  return (
    paths.length === Object.keys(installed).length &&
    paths.every((path) => key(wanted[path]) === key(installed[path]))
  );
}

/** Installs the benchmark's own dependencies (the peers) when they are missing or stale. */
export function ensureDependencies() {
  if (dependenciesCurrent()) return;
  process.stderr.write('bench: installing bench dependencies (npm ci --prefix bench)\n');
  run('npm', ['ci', '--prefix', benchDir, '--no-audit', '--no-fund'], rootDir);
}

/** Builds Ursa into dist/. Always: tsc takes under a second, and a stale dist would time old code. */
export function buildUrsa() {
  process.stderr.write('bench: building Ursa (npm run build)\n');
  run('npm', ['run', 'build', '--silent'], rootDir);
}

/** Which Ursa was measured: the commit of the working tree dist/ was built from, and its edits. */
export function ursaSource() {
  const git = (...args) => {
    const result = spawnSync('git', args, { cwd: rootDir, encoding: 'utf8' });
    return result.status === 0 ? result.stdout.trim() : undefined;
  };
  const commit = git('rev-parse', '--short', 'HEAD');
  if (commit === undefined) return 'working tree';
  const edited = (git('status', '--porcelain', '--', 'src') ?? '').split('\n').filter((l) => l !== '').length;
  return `working tree at ${commit}${edited === 0 ? '' : ` with ${edited} file(s) under src/ changed`}`;
}
