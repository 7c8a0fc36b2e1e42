import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir } from './temp.js';

/**
 * Writes `files` (path inside the project → YAML body) to a fresh folder laid out like `_vance/…`,
 * removed after the file's last test.
 */
export function projectFolder(files: Record<string, string>): string {
  const dir = tempDir('ursa-project-');
  for (const [path, body] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), body);
  }
  return dir;
}

/** A shell recipe running `script` with `sh -c`. */
export function shellRecipe(script: string, params: Record<string, string> = {}): string {
  const lines = [
    'description: test recipe',
    'engine: shell',
    `command: ["sh", "-c", ${JSON.stringify(script)}]`,
  ];
  if (Object.keys(params).length > 0) {
    lines.push('params:', ...Object.entries(params).map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`));
  }
  return `${lines.join('\n')}\n`;
}

/** A cron scheduler document. */
export function cronScheduler(cron: string, recipe: string, extra = ''): string {
  return `description: test scheduler\ncron: ${JSON.stringify(cron)}\ntimezone: UTC\nrecipe: ${recipe}\n${extra}`;
}
