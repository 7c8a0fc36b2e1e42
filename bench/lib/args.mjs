/** An error `run.mjs` prints with the usage text (a bad flag), not as a crash. */
export function usageError(message) {
  return Object.assign(new Error(message), { usage: true });
}

/** The whole number >= 1 of flag `arg` (`--flag=value`), or a usage error naming it. */
export function positive(arg, value) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw usageError(`${arg}: expected a whole number >= 1`);
  return n;
}

/** The comma-separated whole numbers >= 1 of flag `arg` (`--workers=1,2,4`). */
export function positives(arg, value) {
  return value.split(',').map((v) => positive(arg, v));
}

/** The stores of flag `arg` (`--stores=postgresql,sqlite`; `postgres` is read as `postgresql`). */
export function stores(arg, value) {
  const names = value.split(',').map((v) => (v === 'postgres' ? 'postgresql' : v));
  if (names.some((s) => s !== 'postgresql' && s !== 'sqlite'))
    throw usageError(`${arg}: stores are postgresql and sqlite`);
  return names;
}
