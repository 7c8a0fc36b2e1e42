import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

/**
 * A fresh folder `<tmpdir>/<prefix>XXXXXX`, removed after the last test of the file that made it
 * (test/setup/temp-dirs.ts). For a folder that a test file uses until its end; the run's root
 * (test/setup/tmpdir.ts) catches any other.
 */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Removes every folder `tempDir` made in this file so far. */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}
