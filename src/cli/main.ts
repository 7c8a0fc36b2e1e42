#!/usr/bin/env node
import { createInterface } from 'node:readline';
import { systemClock } from '../time/clock.js';
import { runCli } from './program.js';

// A reader that stops early (`ursa runs heartbeat | head`) closes the pipe: stop writing and exit
// quietly, as Unix tools do, instead of crashing with a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(process.exitCode ?? 0);
});

const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: () => createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY }),
  clock: systemClock,
  env: process.env,
  cwd: process.cwd(),
});
process.exitCode = code;
