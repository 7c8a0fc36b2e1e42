import { describe, expect, it } from 'vitest';
import type { UrsaError } from '../../src/errors/index.js';
import {
  SCHEDULER_PREFIX,
  schedulerNameFromPath,
  schedulerPath,
  validateName,
} from '../../src/scheduler/document.js';
import { thrown } from '../support/cron.js';

const RULE =
  '1 to 128 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit, without ".." ([A-Za-z0-9][A-Za-z0-9._-]{0,127})';

// decisions §6: a name outside [A-Za-z0-9][A-Za-z0-9._-]{0,127} is refused with the reason.
describe('scheduler names (decisions §6)', () => {
  it.each(['morning-briefing', 'a', 'Backup_2026.v2', '0', 'x'.repeat(128)])('accepts %j', (name) => {
    expect(validateName(name)).toBe(name);
  });

  it.each([
    ['', '""'],
    ['a/b', '"a/b"'],
    ['..', '".."'],
    ['a..b', '"a..b"'],
    ['../etc/passwd', '"../etc/passwd"'],
    ['.hidden', '".hidden"'],
    ['-flag', '"-flag"'],
    ['nul\u0000byte', '"nul\\u0000byte"'],
    ['with space', '"with space"'],
    ['umlaut-ä', '"umlaut-ä"'],
    ['trailing\n', '"trailing\\n"'],
  ])('refuses %j with NAME_INVALID naming the value and the rule', (name, shown) => {
    const error = thrown(() => validateName(name, 'scheduler name')) as UrsaError;
    expect(error.code).toBe('NAME_INVALID');
    expect(error.message).toBe(`scheduler name ${shown} is not allowed: a name is ${RULE}`);
    expect(error.value).toBe(name);
    expect(error.allowed).toBe(RULE);
  });

  it('refuses a name of 129 characters and shortens it in the message', () => {
    const name = 'x'.repeat(129);
    const error = thrown(() => validateName(name)) as UrsaError;
    expect(error.code).toBe('NAME_INVALID');
    expect(error.message).toBe(
      `name "${'x'.repeat(60)}…" (129 characters) is not allowed: a name is ${RULE}`,
    );
  });
});

// spec §1: a scheduler is `_vance/scheduler/<name>.yaml`; the file name without .yaml is its name.
describe('scheduler document paths (spec §1)', () => {
  it('builds the path of a name', () => {
    expect(SCHEDULER_PREFIX).toBe('_vance/scheduler/');
    expect(schedulerPath('morning-briefing')).toBe('_vance/scheduler/morning-briefing.yaml');
  });

  it('refuses to build a path for a bad name', () => {
    expect((thrown(() => schedulerPath('../../etc')) as UrsaError).code).toBe('NAME_INVALID');
  });

  it('reads the name back from the path without checking it', () => {
    expect(schedulerNameFromPath('_vance/scheduler/morning-briefing.yaml')).toBe('morning-briefing');
    expect(schedulerNameFromPath('_vance/scheduler/sub/x.yaml')).toBe('sub/x');
  });

  it('refuses a path outside the scheduler prefix', () => {
    const error = thrown(() => schedulerNameFromPath('_vance/recipes/noop.yaml')) as UrsaError;
    expect(error.code).toBe('ARGUMENT_INVALID');
    expect(error.message).toBe('"_vance/recipes/noop.yaml" is not under _vance/scheduler/');
  });
});
