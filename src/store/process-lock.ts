import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { UrsaError } from '../errors/index.js';

/** A held lock; `release()` removes it. */
export interface ProcessLock {
  release(): void;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}

/**
 * Makes this process the only worker on a SQLite file (decisions §5): a lock file beside it
 * (`<file>.lock`) holds the owner's host and pid. A lock whose process is gone is taken over.
 *
 * @throws UrsaError `STORE_LOCKED` when another live Ursa process holds the file.
 */
export function lockSqliteFile(file: string): ProcessLock {
  const path = `${file}.lock`;
  const me = JSON.stringify({ host: hostname(), pid: process.pid });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, me);
      closeSync(fd);
      return { release: () => rmSync(path, { force: true }) };
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error;
    }
    let owner: { host?: string; pid?: number } = {};
    try {
      owner = JSON.parse(readFileSync(path, 'utf8')) as typeof owner;
    } catch {
      // Unreadable or half-written: treat as stale.
    }
    if (
      owner.host === hostname() &&
      typeof owner.pid === 'number' &&
      owner.pid !== process.pid &&
      alive(owner.pid)
    ) {
      throw new UrsaError(
        'STORE_LOCKED',
        `store: ${file} is in use by another Ursa process (pid ${owner.pid}); SQLite supports one process — use PostgreSQL (--db postgres://…) for several workers`,
        { field: 'db', value: file },
      );
    }
    rmSync(path, { force: true });
  }
  throw new UrsaError('STORE_LOCKED', `store: cannot lock ${file}`, { field: 'db', value: file });
}
