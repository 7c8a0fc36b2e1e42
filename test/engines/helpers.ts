import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach } from 'vitest';
import type { EngineRequest } from '../../src/engines/engine.js';

/** The context every test run carries. */
export const context = {
  tenant: 'acme',
  project: 'web',
  scheduler: 'nightly-report',
  correlationId: 'corr-0001',
  scheduledFor: Date.parse('2026-03-28T12:00:00Z'),
  runAs: 'alice',
} as const;

export interface RequestOptions {
  readonly params?: Readonly<Record<string, unknown>>;
  readonly initialMessage?: string;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** A request for a `shell` recipe running `command`. */
export function request(command: readonly string[] | undefined, options: RequestOptions = {}): EngineRequest {
  return {
    processId: 'proc-42',
    recipe: {
      name: 'test-recipe',
      description: 'a recipe for engine tests',
      engine: 'shell',
      params: {},
      command,
      url: undefined,
      headers: undefined,
      secretHeaders: undefined,
      timeoutMs: options.timeoutMs,
      source: 'builtin',
    },
    params: options.params ?? {},
    initialMessage: options.initialMessage,
    context,
    signal: options.signal ?? new AbortController().signal,
  };
}

/** `node -e script` with the running Node binary, so tests do not depend on PATH. */
export function node(script: string): string[] {
  return [process.execPath, '-e', script];
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temporary directory, removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ursa-engine-'));
  dirs.push(dir);
  return dir;
}

/** Polls (every 10 ms, at most 10 s) until a child process has written `path`. */
export async function waitForFile(path: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`${path} was never written`);
    await delay(10);
  }
}

/**
 * Resolves once `process.kill(pid, 0)` throws ESRCH. A killed grandchild is re-parented to init (or
 * a sub-reaper), which reaps it on its own schedule; until then the kernel still finds the zombie,
 * so this polls (every 20 ms, at most 10 s). A process that is still running after 10 s fails it.
 */
export async function waitUntilGone(pid: number): Promise<NodeJS.ErrnoException> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch (error) {
      return error as NodeJS.ErrnoException;
    }
    if (Date.now() > deadline) throw new Error(`process ${pid} is still there`);
    await delay(20);
  }
}
