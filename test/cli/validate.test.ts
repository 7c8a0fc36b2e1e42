import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ursa } from '../support/cli.js';
import { DIALECTS, freshDatabase, type TestDatabase } from '../support/dialects.js';

// issue #23 item 7: `ursa validate` checks what a document names (runAs user, recipe, engine)
// against a store when there is one, with the field path and "did you mean"; offline it says what
// it did not check.

let cwd: string | undefined;
let database: TestDatabase | undefined;
afterEach(async () => {
  if (cwd !== undefined) rmSync(cwd, { recursive: true, force: true });
  await database?.drop();
  cwd = undefined;
  database = undefined;
});

const scheduler = (extra: string) => `description: d\ncron: "0 0 9 * * *"\n${extra}`;

describe('ursa validate without a store', () => {
  it('checks the file only and says it did not check the names', async () => {
    cwd = mkdtempSync(join(tmpdir(), 'ursa-validate-'));
    writeFileSync(join(cwd, 'job.yaml'), scheduler('recipe: nothing-like-it\nrunAs: nobody\n'));
    const run = await ursa(['validate', 'job.yaml'], { cwd });
    expect(run).toEqual({
      code: 0,
      stdout:
        'job.yaml: a valid scheduler (cron "0 0 9 * * *" in UTC)\n  not checked against a store (none configured or found): its runAs user, recipe and engine\n',
      stderr: '',
    });
  });
});

describe.each(DIALECTS)('ursa validate against a store on %s', (dialect) => {
  async function setUp(): Promise<{ dir: string; db: string }> {
    cwd = mkdtempSync(join(tmpdir(), 'ursa-validate-'));
    database = await freshDatabase(dialect);
    const db = database.location;
    mkdirSync(join(cwd, 'project/_vance/recipes'), { recursive: true });
    writeFileSync(
      join(cwd, 'project/_vance/recipes/backup.yaml'),
      'description: back up\nengine: shell\ncommand: ["true"]\n',
    );
    expect((await ursa(['apply', 'project', '--db', db, '--as', 'mia'], { cwd })).code).toBe(0);
    return { dir: cwd, db };
  }

  it('passes a scheduler whose user, recipe and engine the store has, and says it checked them', async () => {
    const { dir, db } = await setUp();
    writeFileSync(join(dir, 'job.yaml'), scheduler('recipe: backup\nrunAs: mia\n'));
    const run = await ursa(['validate', 'job.yaml', '--db', db, '--json'], { cwd: dir });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ valid: true, store: db, issues: [] });
  });

  it('refuses an unknown runAs user and an unknown recipe with their paths and the near miss', async () => {
    const { dir, db } = await setUp();
    writeFileSync(join(dir, 'job.yaml'), scheduler('recipe: backpu\nrunAs: mai\n'));
    const run = await ursa(['validate', 'job.yaml', '--db', db], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      [
        'ursa: job.yaml: runAs: no user "mai" in tenant default (did you mean "mia"?) (add one with apply --as or user add, or name an existing user)',
        'job.yaml: recipe: "backpu" is not a recipe of default/demo, of _tenant, or built in (did you mean "backup"?) [USER_NOT_FOUND]',
        '',
      ].join('\n'),
    );
    const json = JSON.parse(
      (await ursa(['validate', 'job.yaml', '--db', db, '--json'], { cwd: dir })).stdout,
    );
    expect(json).toMatchObject({ valid: false, code: 'USER_NOT_FOUND', store: db });
    expect(json.issues.map((i: { path: string }) => i.path)).toEqual(['runAs', 'recipe']);
  });

  it("refuses a recipe whose engine this Ursa does not have, the recipe's own and a scheduler's", async () => {
    const { dir, db } = await setUp();
    mkdirSync(join(dir, 'more/_vance/recipes'), { recursive: true });
    const recipe = 'description: d\nengine: shel\n';
    writeFileSync(join(dir, 'more/_vance/recipes/odd.yaml'), recipe);
    const own = await ursa(['validate', 'more/_vance/recipes/odd.yaml', '--db', db], { cwd: dir });
    expect(own.code).toBe(2);
    expect(own.stderr).toBe(
      'ursa: more/_vance/recipes/odd.yaml: engine: recipe "odd" runs on engine "shel", which this Ursa does not have (did you mean "shell"?); the engines are shell, noop, http, agent [ENGINE_NOT_FOUND]\n',
    );
    expect((await ursa(['apply', 'more', '--db', db], { cwd: dir })).code).toBe(0);
    writeFileSync(join(dir, 'job.yaml'), scheduler('recipe: odd\n'));
    const json = JSON.parse(
      (await ursa(['validate', 'job.yaml', '--db', db, '--json'], { cwd: dir })).stdout,
    );
    expect(json).toMatchObject({ valid: false, code: 'ENGINE_NOT_FOUND', issues: [{ path: 'recipe' }] });
  });
});
