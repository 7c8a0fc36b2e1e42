import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { isStoreUnreachable, translateStoreError } from '../../src/store/errors.js';
import { freshDatabase } from '../support/dialects.js';

// Which driver errors mean the store cannot be reached (issue #19): those are STORE_UNAVAILABLE
// (503) for every caller, never INTERNAL or bad input; a fault of the statement stays what it is.
// Real errors of the real drivers, no imitations.

/** The error a call gives, or fails the test when it gives none. */
async function errorOf(work: () => unknown): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

describe('store errors that mean the store is unavailable (issue #19)', () => {
  it('a refused PostgreSQL connection is; a statement PostgreSQL refuses is not', async () => {
    const refused = await errorOf(async () => {
      const client = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:1/postgres' });
      client.on('error', () => {});
      await client.connect();
    });
    expect(isStoreUnreachable(refused)).toBe(true);
    const translated = translateStoreError(refused);
    expect(translated).toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: 'the store cannot be reached; try again later',
      cause: refused,
    });

    const database = await freshDatabase('postgres');
    const client = new pg.Client({ connectionString: database.location });
    await client.connect();
    try {
      const syntax = await errorOf(() => client.query('selec 1'));
      expect((syntax as { code?: string }).code).toBe('42601');
      expect(isStoreUnreachable(syntax)).toBe(false);
      expect(translateStoreError(syntax)).toBe(syntax);
    } finally {
      await client.end();
      await database.drop();
    }
    const ended = await errorOf(() => client.query('select 1'));
    expect(isStoreUnreachable(ended)).toBe(true);
  });

  it('a SQLite file that is not a database (any more) is; a statement SQLite refuses is not', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ursa-errors-'));
    const file = join(dir, 'ursa.db');
    writeFileSync(file, 'overwritten by something else entirely\n'.repeat(100));
    const db = new SQLite(file);
    try {
      const notADatabase = await errorOf(() => db.prepare('select * from sqlite_master').all());
      expect((notADatabase as { code?: string }).code).toBe('SQLITE_NOTADB');
      expect(isStoreUnreachable(notADatabase)).toBe(true);
      const syntax = await errorOf(() => db.prepare('selec 1'));
      expect((syntax as { code?: string }).code).toBe('SQLITE_ERROR');
      expect(isStoreUnreachable(syntax)).toBe(false);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
