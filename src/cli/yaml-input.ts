import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { UrsaError } from '../errors/index.js';
import type { CliIo } from './io.js';

/**
 * The YAML document a writing command was given with `-f <file>`: the file's text (relative to
 * the working directory), or standard input for `-`.
 *
 * @throws UrsaError `ARGUMENT_INVALID` (field `file`) when the file cannot be read.
 */
export async function readYamlInput(io: CliIo, file: string): Promise<string> {
  if (file === '-') {
    const lines: string[] = [];
    for await (const line of io.stdin()) lines.push(line);
    return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
  }
  try {
    return readFileSync(resolve(io.cwd, file), 'utf8');
  } catch {
    throw new UrsaError('ARGUMENT_INVALID', `--file: cannot read ${JSON.stringify(file)}`, {
      field: 'file',
      value: file,
    });
  }
}
