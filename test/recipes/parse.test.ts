import { describe, expect, it } from 'vitest';
import type { UrsaError } from '../../src/errors/index.js';
import { parseRecipeDocument, validateRecipeDocument } from '../../src/recipes/parse.js';
import { RECIPE_PREFIX, recipePath } from '../../src/recipes/paths.js';
import { thrown } from '../support/cron.js';

const PATH = '_vance/recipes/backup.yaml';
const options = { name: 'backup', path: PATH, source: 'project' } as const;

function refusal(text: string): UrsaError {
  return thrown(() => parseRecipeDocument(text, options)) as UrsaError;
}

// decisions §2: recipes are YAML documents `_vance/recipes/<name>.yaml` with engine, description, params.
describe('recipe documents (decisions §2)', () => {
  it('reads a shell recipe with its argv, default params and timeout', () => {
    expect(
      parseRecipeDocument(
        `description: Nightly backup.
engine: shell
command: [/usr/local/bin/backup, --full]
params:
  target: s3
timeout: PT30M
`,
        options,
      ),
    ).toEqual({
      name: 'backup',
      description: 'Nightly backup.',
      engine: 'shell',
      params: { target: 's3' },
      command: ['/usr/local/bin/backup', '--full'],
      timeoutMs: 1_800_000,
      source: 'project',
    });
  });

  it('defaults params to {} and leaves command and timeout unset', () => {
    expect(
      parseRecipeDocument('description: Quiet.\nengine: noop\n', { ...options, source: 'tenant' }),
    ).toEqual({
      name: 'backup',
      description: 'Quiet.',
      engine: 'noop',
      params: {},
      command: undefined,
      timeoutMs: undefined,
      source: 'tenant',
    });
  });

  it('lets an engine registered by a library user take a command', () => {
    const recipe = parseRecipeDocument('description: d\nengine: docker\ncommand: [run]\n', options);
    expect(recipe.engine).toBe('docker');
    expect(recipe.command).toEqual(['run']);
  });

  it('requires command for the shell engine', () => {
    const error = refusal('description: d\nengine: shell\n');
    expect(error.code).toBe('RECIPE_INVALID');
    expect(error.message).toBe(
      `${PATH}: command: is required when engine is shell: the argv list to run, e.g. [/usr/local/bin/backup, --full]`,
    );
    expect(error.field).toBe('command');
  });

  it('refuses command for the other built-in engines', () => {
    expect(refusal('description: d\nengine: noop\ncommand: [/bin/true]\n').issues).toEqual([
      { path: 'command', message: 'is only for the shell engine; engine "noop" takes none' },
    ]);
    expect(
      refusal('description: d\nengine: http\nurl: https://hooks.example.com/x\ncommand: [curl]\n').issues,
    ).toEqual([{ path: 'command', message: 'is only for the shell engine; engine "http" takes none' }]);
  });

  it('refuses a shell string as command (decisions §6: argv arrays only)', () => {
    expect(refusal('description: d\nengine: shell\ncommand: "backup --full && rm -rf /"\n').issues).toEqual([
      {
        path: 'command',
        message:
          'expected a list of arguments (argv), found the string "backup --full && rm -rf /"; a shell command string is not accepted',
      },
    ]);
  });

  it('refuses an empty command and an empty argument', () => {
    expect(refusal('description: d\nengine: shell\ncommand: []\n').issues).toEqual([
      { path: 'command', message: 'must hold at least the program to run' },
    ]);
    expect(refusal('description: d\nengine: shell\ncommand: [backup, ""]\n').issues).toEqual([
      { path: 'command[1]', message: 'must not be empty' },
    ]);
  });

  it('refuses a timeout that is not a fixed-length ISO-8601 duration', () => {
    expect(refusal('description: d\nengine: noop\ntimeout: P1M\n').issues).toEqual([
      {
        path: 'timeout',
        message:
          '"P1M" has years or months, which have no fixed length; use weeks, days, hours, minutes or seconds (e.g. P30D)',
      },
    ]);
  });

  it('lists every issue: missing description and engine, wrong params, unknown field', () => {
    const error = refusal('params: [a]\nretries: 3\n');
    expect(error.message.split('\n')).toEqual([
      `${PATH}: description: is required (a string)`,
      `${PATH}: engine: is required (a string)`,
      `${PATH}: params: expected a mapping, found a list`,
      `${PATH}: retries: unknown field; the fields are description, engine, params, command, url, headers, secretHeaders, timeout, heartbeatTimeout`,
    ]);
  });

  it('lets a YAML refusal through as DOCUMENT_INVALID', () => {
    const error = refusal('description: d\nengine: noop\nengine: shell\n');
    expect(error.code).toBe('DOCUMENT_INVALID');
    expect(error.message).toBe(`${PATH}: line 3, column 1: duplicate key "engine"`);
  });

  it('refuses a recipe name outside the name rule (decisions §6)', () => {
    const error = thrown(() =>
      parseRecipeDocument('description: d\nengine: noop\n', { ...options, name: 'a/b' }),
    ) as UrsaError;
    expect(error.code).toBe('NAME_INVALID');
  });

  it('validates without throwing', () => {
    expect(validateRecipeDocument('description: d\nengine: 7\n', options)).toEqual({
      ok: false,
      issues: [{ path: 'engine', message: 'expected a string, found the number 7' }],
    });
    const result = validateRecipeDocument('description: d\nengine: noop\n', options);
    expect(result.ok && result.recipe.engine).toBe('noop');
  });

  it('builds the document path of a recipe', () => {
    expect(RECIPE_PREFIX).toBe('_vance/recipes/');
    expect(recipePath('backup')).toBe('_vance/recipes/backup.yaml');
    expect((thrown(() => recipePath('..')) as UrsaError).code).toBe('NAME_INVALID');
  });
});
