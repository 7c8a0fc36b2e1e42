#!/usr/bin/env node
import { createInterface } from 'node:readline';
import { systemClock } from '../time/clock.js';
import { runCli } from './program.js';

const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: () => createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY }),
  clock: systemClock,
  env: process.env,
  cwd: process.cwd(),
});
process.exitCode = code;
