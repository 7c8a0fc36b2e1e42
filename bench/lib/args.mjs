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
