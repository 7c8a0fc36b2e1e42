import { describe, expect, it } from 'vitest';
import { ursa } from '../support/cli.js';

// User-facing text names no specification section or issue number (issue #21): those belong in
// comments and docs/, not in what `ursa … --help` shows a user.
const CITATION = /§|\bspec\b|decisions §|issue #/i;

/** The subcommand names a commander help text lists under "Commands:", without `help`. */
function subcommands(help: string): string[] {
  // The section ends at its first blank line; text after it (a command's own notes) is not a list.
  const section = help.split(/^Commands:$/m)[1]?.split(/\n\s*\n/)[0];
  if (section === undefined) return [];
  return [...section.matchAll(/^ {2}(\S+)/gm)]
    .map((m) => (m[1] ?? '').split('|')[0] ?? '')
    .filter((name) => name !== '' && name !== 'help');
}

/** Every command path of the program, the program itself first, found through its help texts. */
async function helpTexts(): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  const visit = async (path: string[]): Promise<void> => {
    if (path.length > 3) throw new Error(`commands nested deeper than expected: ${path.join(' ')}`);
    const run = await ursa([...path, '--help']);
    expect(run.code, `ursa ${path.join(' ')} --help`).toBe(0);
    texts.set(['ursa', ...path].join(' '), run.stdout);
    for (const name of subcommands(run.stdout)) await visit([...path, name]);
  };
  await visit([]);
  return texts;
}

describe('help texts', () => {
  it('of the program and every command and subcommand cite no spec section or issue', async () => {
    const texts = await helpTexts();
    // The walk reached the commands, not just the program's own page.
    expect(texts.size).toBeGreaterThan(20);
    for (const name of ['ursa next', 'ursa serve', 'ursa workflow', 'ursa settings set']) {
      expect(
        [...texts.keys()].some((k) => k.startsWith(name)),
        name,
      ).toBe(true);
    }
    for (const [command, text] of texts) expect(text, command).not.toMatch(CITATION);
  });
});

// issue #23: a mistyped command or option gets "did you mean", at every level of the program.
describe('a near-miss command or option', () => {
  it.each([
    [['lst'], "error: unknown command 'lst'\n(Did you mean list?)\n"],
    [['workflow', 'lst'], "error: unknown command 'lst'\n(Did you mean list?)\n"],
    [['list', '--jsn'], "error: unknown option '--jsn'\n(Did you mean --json?)\n"],
  ])('ursa %j suggests the one it likely is, exit 2', async (args, stderr) => {
    const run = await ursa(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(stderr);
  });
});
