import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configurationReference } from '../../src/config/reference.js';
import { settingDefinitions, settingKeys } from '../../src/config/schema.js';
import { ursa } from '../support/cli.js';

const file = resolve(import.meta.dirname, '../../docs/configuration.md');

// The operator options are documented in one reference, docs/configuration.md, held in sync with
// their definitions in src/config/schema.ts (issue #19), as the error catalogue is with
// docs/errors.md.
describe('configuration reference', () => {
  it('docs/configuration.md is what `ursa config --reference` prints (regenerate it with that command)', () => {
    expect(readFileSync(file, 'utf8')).toBe(configurationReference());
  });

  it('has one row per setting, naming its ursa.yaml key, variable and flag', () => {
    const rows = configurationReference()
      .split('\n')
      .filter((line) => line.startsWith('| `') && !line.startsWith('| `ursa.yaml`'));
    expect(rows).toHaveLength(settingKeys.length);
    settingKeys.forEach((key, i) => {
      const d = settingDefinitions[key];
      expect(rows[i]).toContain(`| \`${d.yamlKey}\` | \`${d.env}\` | \`${d.flag}\` |`);
    });
  });
});

// The flags the reference lists exist where the settings take effect: on the commands that run
// the scheduler (issue #19).
describe.each(['serve', 'worker'])('ursa %s', (command) => {
  it('takes every setting’s flag from the reference', async () => {
    const { code, stdout } = await ursa([command, '--help']);
    expect(code).toBe(0);
    const missing = settingKeys
      .map((key) => settingDefinitions[key].flag)
      .filter((flag) => !new RegExp(`^\\s+${flag} <`, 'm').test(stdout));
    expect(missing).toEqual([]);
  });
});
