import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { UrsaError } from '../../src/errors/index.js';
import { lockSqliteFile } from '../../src/store/process-lock.js';
import { thrown } from '../support/cron.js';

let child: ChildProcess | undefined;
afterEach(() => {
  child?.kill('SIGKILL');
  child = undefined;
});

// decisions §5: a second Ursa process on one SQLite file is refused with a clear message.
describe('the SQLite process lock (decisions §5)', () => {
  it('refuses a file another live process holds, naming it and pointing to PostgreSQL', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ursa-lock-')), 'ursa.db');
    child = spawn('sleep', ['30']);
    writeFileSync(`${file}.lock`, JSON.stringify({ host: hostname(), pid: child.pid }));
    const error = thrown(() => lockSqliteFile(file)) as UrsaError;
    expect(error).toBeInstanceOf(UrsaError);
    expect(error.code).toBe('STORE_LOCKED');
    expect(error.message).toBe(
      `store: ${file} is in use by another Ursa process (pid ${child.pid}); SQLite supports one process — use PostgreSQL (--db postgres://…) for several workers`,
    );
  });

  it('takes over the lock of a process that is gone, and releases it', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ursa-lock-')), 'ursa.db');
    writeFileSync(`${file}.lock`, JSON.stringify({ host: hostname(), pid: 2 ** 22 + 17 }));
    const lock = lockSqliteFile(file);
    expect(existsSync(`${file}.lock`)).toBe(true);
    lock.release();
    expect(existsSync(`${file}.lock`)).toBe(false);
  });
});
