import { describe, expect, it } from 'vitest';
import { TableChecksum } from '../../../src/store/copy/checksum.js';
import { type CopyResult, copyMismatch } from '../../../src/store/copy/copy.js';

// Issue #26 item 1: a table's checksum compares SQLite's and PostgreSQL's rows equal, whatever
// order they come in and however the driver gave an integer.

function sum(rows: Record<string, unknown>[], integers: string[] = ['id', 'at']): string {
  const checksum = new TableChecksum(new Set(integers));
  for (const row of rows) checksum.add(row);
  return checksum.hex;
}

describe('the checksum of a copied table (issue #26)', () => {
  const rows = [
    { id: 1, at: 1_780_000_000_000, body: 'é', note: null },
    { id: 2, at: 1_780_000_060_000, body: 'Z', note: 'x' },
  ];

  it('is the same in any row order and any column order', () => {
    const reordered = [
      { note: 'x', body: 'Z', at: 1_780_000_060_000, id: 2 },
      { body: 'é', id: 1, note: null, at: 1_780_000_000_000 },
    ];
    expect(sum(reordered)).toBe(sum(rows));
    expect(sum(rows)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('takes an integer column as a number whether it came as a number, a BigInt or bigint text', () => {
    const asText = rows.map((r) => ({ ...r, id: String(r.id), at: String(r.at) }));
    const asBigInt = rows.map((r) => ({ ...r, id: BigInt(r.id), at: BigInt(r.at) }));
    expect(sum(asText)).toBe(sum(rows));
    expect(sum(asBigInt)).toBe(sum(rows));
  });

  it('tells apart text that looks like a number, a changed value, a missing and an extra row', () => {
    const base = sum(rows);
    expect(sum(rows.map((r) => ({ ...r, body: r.id === 1 ? '1' : r.body })))).not.toBe(
      sum(rows.map((r) => ({ ...r, body: r.id === 1 ? 1 : r.body }))),
    );
    expect(sum(rows.map((r) => ({ ...r, note: r.id === 1 ? '' : r.note })))).not.toBe(base);
    expect(sum(rows.slice(1))).not.toBe(base);
    expect(sum([...rows, { id: 3, at: 0, body: '', note: null }])).not.toBe(base);
  });

  it('names the tables that differ when a copy does not verify', () => {
    const table = (name: string, equal: boolean) => ({
      table: name,
      sourceRows: 1,
      targetRows: equal ? 1 : 0,
      sourceChecksum: '0'.repeat(64),
      targetChecksum: '0'.repeat(64),
      equal,
    });
    const result: CopyResult = {
      from: '/data/ursa.db',
      to: 'postgres://ursa@db/ursa',
      tables: [table('feed', false), table('runs', true), table('tokens', false)],
      verified: false,
    };
    const error = copyMismatch(result);
    expect([error.code, error.kind]).toEqual(['STORE_COPY_MISMATCH', 'infrastructure']);
    expect(error.message).toBe(
      'store: the copy in postgres://ursa@db/ursa differs from /data/ursa.db in feed, tokens; copy again with --force',
    );
  });
});
