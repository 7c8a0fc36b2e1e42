import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * One fresh folder for everything the run writes to the temporary directory, removed when the run
 * ends: test folders are cleaned up by construction, not by each test remembering to. `os.tmpdir()`
 * reads TMPDIR on each call, and the test workers and the processes they spawn inherit this
 * process's environment, so every `mkdtempSync(join(tmpdir(), …))` lands inside the root.
 * A child started with an explicit `env` that drops TMPDIR would write to the system folder again;
 * counting the entries of the system folder before and after a run shows such a leak.
 */
export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'ursa-tests-'));
  // Open as the system folder is (mkdtemp makes it 0700): a process a test runs as another user
  // (PostgreSQL's, when the suite runs as root) must still reach its own folder in here.
  chmodSync(root, 0o1777);
  process.env.TMPDIR = root;
  return () => rmSync(root, { recursive: true, force: true });
}
