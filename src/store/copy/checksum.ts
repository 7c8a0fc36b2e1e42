import { createHash } from 'node:crypto';

/** A row as a snapshot reads it: column name to value. */
export type Row = Readonly<Record<string, unknown>>;

const MOD = 1n << 256n;

/**
 * A value in the one form both dialects compare equal in (issue #26): an integer as a JSON
 * number whatever the driver gave (a JavaScript number, a BigInt, or PostgreSQL's `bigint` text
 * when `integer` says the column is one), text as text, null as null.
 */
function normalise(value: unknown, integer: boolean): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : String(value);
  if (integer && typeof value === 'string' && /^-?\d+$/.test(value)) return Number(value);
  if (Buffer.isBuffer(value)) return value.toString('base64');
  return value;
}

/**
 * The checksum of one table's rows (issue #26): the sum, modulo 2^256, of the SHA-256 of each
 * row's normalised values in column-name order. A sum does not depend on the order rows come in,
 * so SQLite's and PostgreSQL's orders of text keys (byte order against a collation) compare
 * equal; rows are unique by their primary key, so no two rows cancel out.
 */
export class TableChecksum {
  #sum = 0n;
  #rows = 0;

  /** `integers`: the columns that hold integers (see {@link normalise}). */
  constructor(private readonly integers: ReadonlySet<string> = new Set()) {}

  add(row: Row): void {
    const names = Object.keys(row).sort();
    const values = names.map((name) => [name, normalise(row[name], this.integers.has(name))]);
    const digest = createHash('sha256').update(JSON.stringify(values)).digest('hex');
    this.#sum = (this.#sum + BigInt(`0x${digest}`)) % MOD;
    this.#rows++;
  }

  get rows(): number {
    return this.#rows;
  }

  /** 64 hex digits. */
  get hex(): string {
    return this.#sum.toString(16).padStart(64, '0');
  }
}
