// The unit project (vitest.config.ts) resolves `better-sqlite3` and `pg` to this module, so a test
// that opens a database there fails at once with a message naming the fix, instead of passing
// slowly or hanging on a PostgreSQL the unit project never starts. Importing a module that merely
// mentions them (types, a store helper never called) stays fine: only a use throws.

const message =
  'a unit test opened a database: unit tests need none (vitest.config.ts); move this test file to a folder of the integration project';

function refuse(): never {
  throw new Error(message);
}

/** Throws on every call, construction or property read but `then` (so `await import()` of it works). */
const blocked: unknown = new Proxy(() => {}, {
  apply: refuse,
  construct: refuse,
  get: (_target, key) => (key === 'then' || typeof key === 'symbol' ? undefined : refuse()),
});

export default blocked;
