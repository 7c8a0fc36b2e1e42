// Ursa embedded in an application, with an engine of its own.
// Run it (after `npm ci`) with:  node examples/embedded/embed.mjs
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createUrsa } from 'ursa';

const here = dirname(fileURLToPath(import.meta.url));
const seconds = Number(process.env.EMBED_SECONDS ?? 7);

const ursa = await createUrsa({
  db: join(mkdtempSync(join(tmpdir(), 'ursa-embedded-')), 'app.db'),
  logger: 'warn',
  engines: {
    // An engine is an async function of the process and an AbortSignal.
    async greet(process, signal) {
      if (signal.aborted) return;
      const line = `hello, ${process.params.name} (run ${process.correlationId}, due ${new Date(process.scheduledFor).toISOString()})`;
      console.log(line);
      return { output: line };
    },
  },
});

const applied = await ursa.apply(join(here, 'project'));
console.log(applied.map((entry) => `${entry.status} ${entry.path}`).join('\n'));
await ursa.start();
// A manual fire goes through the same path as the cron ticks that follow every two seconds.
const { correlationId } = await ursa.fire('greeting');
console.log(`fired greeting: ${correlationId}`);
await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
await ursa.stop();
