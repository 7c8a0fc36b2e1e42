import type { ConfigFacts, PathFacts, StoreFacts, StrayVariable } from './facts.js';
import { type Finding, finding } from './finding.js';

/**
 * The judges of how Ursa is set up (issue #26 item 4): configuration sources, stray variables, the
 * store's reach and schema, a SQLite store's file modes. Pure: facts in, findings out.
 */

/** Where a refused value was set, as a fix names it: `ursa.yaml: port` → edit the file, … */
function whereToFix(field: string): string {
  if (field.startsWith('env ')) return `correct or unset the variable ${field.slice(4)}`;
  if (field.startsWith('--')) return `correct the flag ${field.split(' ')[0]}`;
  const file = field.split(':')[0] ?? field;
  return `correct or remove it in ${file}`;
}

/** The configuration: each refused value an error; else which sources were read, and any clamped value. */
export function judgeConfig(config: ConfigFacts): Finding[] {
  if (!config.valid) {
    return config.problems.map((p) =>
      finding(
        'config',
        'error',
        `${p.field}: ${p.message}`,
        `${whereToFix(p.field)}; ursa config shows the result`,
      ),
    );
  }
  const read: string[] = [];
  read.push(
    config.file.exists
      ? `${config.file.path}${config.fromFile.length === 0 ? ' (no settings in it)' : ` (${config.fromFile.join(', ')})`}`
      : `no ${config.file.path}`,
  );
  if (config.fromEnv.length > 0) read.push(`environment ${config.fromEnv.join(', ')}`);
  if (config.fromFlags.length > 0) read.push(`flags ${config.fromFlags.join(' ')}`);
  const out = [
    finding('config', 'ok', `configuration valid; read: ${read.join('; ')}; defaults for the rest`),
  ];
  for (const { key, note } of config.notes) {
    out.push(
      finding(
        'config',
        'warning',
        `${key}: ${note}`,
        `set ${key} within its limits (see ursa config --reference)`,
      ),
    );
  }
  return out;
}

/** `URSA_*` variables no setting reads: a near miss of a setting's variable is a warning, any other info. */
export function judgeStrayVariables(stray: readonly StrayVariable[]): Finding[] {
  return stray.map((v) =>
    v.closest === null
      ? finding('environment', 'info', `${v.name} is set but Ursa reads no such variable: it has no effect`)
      : finding(
          'environment',
          'warning',
          `${v.name} is set but Ursa reads no such variable: it has no effect`,
          `did you mean ${v.closest}? rename it`,
        ),
  );
}

/** Where to name the store, for fixes. */
const STORE_SOURCES = '--db, URSA_DB or db: in ursa.yaml';

/** The store: not there yet (SQLite), unreachable, or open with its schema up to date or behind. */
export function judgeStore(store: StoreFacts): Finding[] {
  if (store.state === 'missing') {
    return [
      finding(
        'store',
        'warning',
        `no SQLite store at ${store.location} yet: the first ursa serve (or ursa migrate) creates it there`,
        `if the store is elsewhere, name it with ${STORE_SOURCES} (a relative path is taken from the working directory)`,
      ),
    ];
  }
  if (store.state === 'unreachable') {
    const fix =
      store.dialect === 'postgres'
        ? `check that the PostgreSQL server runs and that the URL's host, port, user, password and database are right (${STORE_SOURCES})`
        : `check that ${store.location} is an Ursa store, readable and writable by this user (${STORE_SOURCES})`;
    return [finding('store', 'error', `${store.message} [${store.code}]`, fix)];
  }
  const reached = finding('store', 'ok', `${store.location} (${store.dialect}) answers`);
  if (store.pending.length === 0) {
    return [reached, finding('migrations', 'ok', `schema up to date (${store.known} migrations)`)];
  }
  const count = `${store.pending.length} migration${store.pending.length === 1 ? '' : 's'}`;
  if (store.pending.length === store.known) {
    return [
      reached,
      finding(
        'migrations',
        'error',
        `no Ursa schema in this store yet (all ${count} pending)`,
        'if this is the store you meant, run ursa migrate (with the same --db) to create the schema; else name the right one',
      ),
    ];
  }
  return [
    reached,
    finding(
      'migrations',
      'error',
      `${count} pending: ${store.pending.join(', ')}; the workers of this version would apply them as they start`,
      'run ursa migrate (with the same --db) before starting the workers',
    ),
  ];
}

/** `0o640` → `0640`. */
function octal(mode: number): string {
  return `0${(mode & 0o777).toString(8).padStart(3, '0')}`;
}

/** What the group and other bits of `mode` let: `writable by every user`, `readable by its group`. */
function exposures(entry: PathFacts): { text: string[]; severity: 'error' | 'warning' } | undefined {
  const { mode } = entry;
  const text: string[] = [];
  let severity: 'error' | 'warning' = 'warning';
  if (mode & 0o002) {
    text.push('writable by every user');
    severity = 'error';
  } else if (mode & 0o020) text.push('writable by its group');
  if (mode & 0o004) text.push('readable by every user');
  else if (mode & 0o040) text.push('readable by its group');
  // A folder others may only enter or list still shows names; reading a file needs the file's bits.
  if (entry.kind === 'folder' && text.length === 0 && mode & 0o011) text.push('open to other users');
  return text.length === 0 ? undefined : { text, severity };
}

/**
 * A SQLite store's folder and files: Ursa makes them owner-only (folder 0700, files 0600). One the
 * user cannot read and write is an error; one writable by every user too (anyone could add a
 * scheduler that runs commands as Ursa's user); one open to the group or readable by others a
 * warning (it holds token hashes and run output).
 */
export function judgePaths(paths: { uid: number; entries: readonly PathFacts[] }): Finding[] {
  const out: Finding[] = [];
  for (const entry of paths.entries) {
    const what = entry.kind === 'folder' ? 'store folder' : 'store file';
    if (!entry.usable) {
      out.push(
        finding(
          'permissions',
          'error',
          `${what} ${entry.path} is not ${entry.kind === 'folder' ? 'writable and searchable' : 'readable and writable'} by this user (uid ${paths.uid}; owner uid ${entry.ownerUid}, mode ${octal(entry.mode)})`,
          `run Ursa as its owner, or give it to Ursa's user: chown <user> ${entry.path}`,
        ),
      );
    }
    const exposed = exposures(entry);
    if (exposed === undefined) continue;
    out.push(
      finding(
        'permissions',
        exposed.severity,
        `${what} ${entry.path} is ${exposed.text.join(' and ')} (mode ${octal(entry.mode)}); it holds token hashes and run output`,
        `chmod ${entry.kind === 'folder' ? '700' : '600'} ${entry.path}`,
      ),
    );
  }
  if (out.length === 0 && paths.entries.length > 0) {
    out.push(
      finding(
        'permissions',
        'ok',
        `store folder and files are owner-only: ${paths.entries.map((e) => `${e.path} ${octal(e.mode)}`).join(', ')}`,
      ),
    );
  }
  return out;
}
