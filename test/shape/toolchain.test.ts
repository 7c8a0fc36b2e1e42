import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

// The shape check needs TypeScript 5.9's JS API, installed beside the project's TypeScript 7 as
// the npm alias `typescript5` (test/shape/typescript-5.mjs). Both packages ship a `tsc`; a full
// `npm ci` links TypeScript 7's, but an `npm install` that adds the alias to an existing
// node_modules can link 5.9's over it, and `npm run typecheck` would then check with the wrong
// compiler without a word. Run `npm ci` when this fails.
describe('toolchain', () => {
  it('node_modules/.bin/tsc is the project’s TypeScript, not the shape check’s 5.9', () => {
    const tsc = realpathSync(resolve(ROOT, 'node_modules/.bin/tsc'));
    expect(tsc).toBe(realpathSync(resolve(ROOT, 'node_modules/typescript/bin/tsc')));
  });
});
