import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The soak's project: `count` schedulers `s0000`…, every twentieth slot of each kind below, so
 * that any 20 consecutive schedulers hold every kind. Most fire every second on the application
 * engine `soak` (soak/worker.mjs); the others cover the overlap policies, `misfire: skip`, a
 * `catchUpWindow`, zones, the built-in `noop` engine and the `shell` engine's timeout and failure,
 * and `overlap: skip` shell runs of 2-12 s, alive when a worker is killed, stalled or cut off.
 * Every shell run is soak/mark.sh, which leaves engine-side marks (soak/marks.mjs).
 */
export const KINDS = [
  { kind: 'every-second', slots: 12, cron: '* * * * * *', recipe: 'soak' },
  {
    kind: 'queue',
    slots: 2,
    cron: '*/2 * * * * *',
    timezone: 'Europe/Berlin',
    recipe: 'soak',
    overlap: 'queue',
    params: { slow: 0.05, slowMinMs: 1500, slowMaxMs: 5000 },
  },
  {
    kind: 'cancel-previous',
    slots: 1,
    cron: '*/5 * * * * *',
    recipe: 'soak',
    overlap: 'cancelPrevious',
    params: { slow: 0.2, slowMinMs: 4000, slowMaxMs: 8000 },
  },
  { kind: 'misfire-skip', slots: 1, cron: '* * * * * *', recipe: 'noop', misfire: 'skip' },
  {
    kind: 'catch-up-window',
    slots: 1,
    cron: '*/3 * * * * *',
    timezone: 'America/New_York',
    recipe: 'soak',
    catchUpWindow: 'PT2S',
  },
  { kind: 'noop', slots: 1, cron: '* * * * * *', timezone: 'Asia/Kolkata', recipe: 'noop' },
  // Even ones time out (the group is killed after 1 s), odd ones exit 3.
  { kind: 'shell', slots: 1, cron: '*/15 * * * * *', recipe: 'shell' },
  { kind: 'shell-skip', slots: 1, cron: '* * * * * *', recipe: 'shell-long' },
];

/**
 * The recipes; a shell one runs `bash <script> <marks file> <witness port> <min ms> <max ms>
 * <exit code> <seed>` (soak/mark.sh).
 */
function recipes({ script, file, port, seed }) {
  const shell = (description, [minMs, maxMs, exitCode], timeout) =>
    `description: ${description}\nengine: shell\n` +
    `command: ${JSON.stringify(['bash', script, file, port, minMs, maxMs, exitCode, seed].map(String))}\n` +
    (timeout === undefined ? '' : `timeout: ${timeout}\n`);
  return {
    soak: 'description: The soak engine (soak/worker.mjs)\nengine: soak\ntimeout: PT3S\n',
    'shell-timeout': shell('A process that outlives its timeout', [1500, 1500, 0], 'PT1S'),
    'shell-fail': shell('A process that fails', [0, 0, 3]),
    'shell-long': shell('A process of 2 to 12 s', [2000, 12_000, 0]),
  };
}

const SLOTS = KINDS.flatMap((k) => Array.from({ length: k.slots }, () => k));

export const schedulerName = (i) => `s${String(i).padStart(4, '0')}`;

/** The kind of scheduler `i`, with its recipe resolved (shell: even → timeout, odd → failure). */
export function kindOf(i) {
  const k = SLOTS[i % SLOTS.length];
  const recipe =
    k.recipe === 'shell'
      ? Math.floor(i / SLOTS.length) % 2 === 0
        ? 'shell-timeout'
        : 'shell-fail'
      : k.recipe;
  return { ...k, recipe, timezone: k.timezone ?? 'UTC' };
}

function yamlOf(i) {
  const k = kindOf(i);
  const lines = [
    `description: Soak scheduler ${i} (${k.kind})`,
    `cron: "${k.cron}"`,
    `timezone: ${k.timezone}`,
    `recipe: ${k.recipe}`,
  ];
  if (k.overlap !== undefined) lines.push(`overlap: ${k.overlap}`);
  if (k.misfire !== undefined) lines.push(`misfire: ${k.misfire}`);
  if (k.catchUpWindow !== undefined) lines.push(`catchUpWindow: ${k.catchUpWindow}`);
  if (k.params !== undefined) lines.push(`params: ${JSON.stringify(k.params)}`);
  return `${lines.join('\n')}\n`;
}

/**
 * Writes the project folder of schedulers `indices` into `dir`; returns `dir`. `marks`: where the
 * shell runs leave their marks, `{ script (mark.sh), file, port (the witness's), seed }`.
 */
export function writeProject(dir, indices, marks) {
  mkdirSync(join(dir, '_vance', 'recipes'), { recursive: true });
  mkdirSync(join(dir, '_vance', 'scheduler'), { recursive: true });
  for (const [name, text] of Object.entries(recipes(marks)))
    writeFileSync(join(dir, '_vance', 'recipes', `${name}.yaml`), text);
  for (const i of indices)
    writeFileSync(join(dir, '_vance', 'scheduler', `${schedulerName(i)}.yaml`), yamlOf(i));
  return dir;
}
