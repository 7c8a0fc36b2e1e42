import { fork } from 'node:child_process';
import { appendFileSync, copyFileSync, cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { formatCount, formatTable } from '../bench/lib/table.mjs';
import { accountEntries, accountStore, PROJECT, TENANT } from './account.mjs';
import { parseArgs, USAGE } from './args.mjs';
import { Fleet, SELF_FENCE, sleep } from './fleet.mjs';
import { accountMarks, describeEnd, iso, marksOf } from './marks.mjs';
import { judgeMemory, MIB } from './memory.mjs';
import { freshDatabase, redact } from './postgres.mjs';
import { schedulerName, writeProject } from './project.mjs';
import { startProxy } from './proxy.mjs';
import { pick, seeded } from './random.mjs';

/**
 * `npm run soak -- --minutes N`: a soak test of Ursa, not part of `npm test` (issue #12).
 * Schedulers (1,000 by default, most firing every second) run on real worker processes for N
 * minutes while faults are injected at random: SIGKILL and SIGTERM of workers (restarted after a
 * pause), SIGKILL and simulated crashes at Ursa's fault points (right after a claim, right before
 * a run's end is written), a worker's event loop stalled past its lease, dropped PostgreSQL
 * connections, and on PostgreSQL one worker's connections cut (its own TCP proxy), engine
 * failures, slow runs and timeouts. After a calm period and a graceful stop, the store is
 * accounted: every occurrence of the window must be exactly one run or absorbed by one coalesced
 * run, no engine may have been entered twice for one occurrence, nothing may be left running, and
 * the steady worker's memory must not grow between the two halves after the warm-up
 * (soak/memory.mjs). So are the processes, from the marks the shell runs leave (soak/marks.mjs):
 * no two runs of an `overlap: skip` scheduler alive at once, no occurrence started twice, none
 * alive after the stop (issue #20). Exit code 0 when all hold, 1 when not, 2 for a bad flag.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SAMPLE_MS = 5000;
const CALM_MS = 12_000; // longer than a lease (5 s) and a slow run: what the faults left is finished by then
const PROGRESS_MS = 30_000;
// A soak at least this long has enough samples after its warm-up for a memory verdict.
const JUDGED_FROM_MS = 2 * 60_000;
// Longer than the lease (5 s), so that the others take a stalled worker's runs over; up to about twice it.
const STALL_MS = [6000, 12_000];
// Some shorter than the lease (the worker reconnects and goes on), some longer (it is taken over).
const CUT_MS = [3000, 12_000];

function fail(message) {
  process.stderr.write(`soak: ${message}\n${USAGE}\n`);
  process.exit(2);
}

let options;
try {
  options = parseArgs(process.argv.slice(2));
} catch (error) {
  if (error.usage) fail(error.message);
  throw error;
}
if (options.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
if (!existsSync(join(ROOT, 'dist', 'index.js'))) fail('dist/ is missing: run `npm run build` first');

const progress = (text) => process.stderr.write(`soak: ${text}\n`);
const clock = (ms) => {
  const s = Math.max(0, Math.round(ms / 1000));
  return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
};
const mib = (bytes) => `${Math.round(bytes / MIB)} MiB`;

/**
 * A private copy of dist/ as built now: the workers restart all through the soak, and a rebuild
 * of dist/ meanwhile (someone's `npm test`) must not change the code they run. It lives in soak/
 * (git ignores `dist/`), so its imports resolve to Ursa's node_modules.
 */
function snapshotDist() {
  const root = mkdtempSync(join(ROOT, 'soak', '.dist-'));
  cpSync(join(ROOT, 'dist'), join(root, 'dist'), { recursive: true });
  return { dist: join(root, 'dist'), remove: () => rmSync(root, { recursive: true, force: true }) };
}

async function applyProject(dist, location, folder) {
  const { createUrsa } = await import(pathToFileURL(join(dist, 'index.js')).href);
  // The soak engine's name must resolve when the recipes are validated; the workers bring the real one.
  const ursa = await createUrsa({
    db: location,
    logger: 'warn',
    engines: { soak: async () => {} },
    project: PROJECT,
  });
  try {
    const entries = await ursa.apply(folder, { tenant: TENANT, project: PROJECT, as: 'soak' });
    const refused = entries.filter((e) => e.status !== 'created');
    if (refused.length > 0)
      throw new Error(`applying the project: ${refused.length} refused, first ${JSON.stringify(refused[0])}`);
    return entries.length;
  } finally {
    await ursa.stop();
  }
}

/** The witness of the shell runs (soak/witness.mjs): `{ port, open(), stop() }`. */
async function startWitness(file) {
  const child = fork(fileURLToPath(new URL('./witness.mjs', import.meta.url)), [file], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the witness exited (code ${code})`)));
    child.on('message', (m) => m.type === 'listening' && resolve(m.port));
  });
  return {
    port,
    open: () =>
      new Promise((resolve) => {
        const onMessage = (m) => {
          if (m.type !== 'open') return;
          child.off('message', onMessage);
          resolve(m.runs);
        };
        child.on('message', onMessage);
        child.send({ type: 'open' });
      }),
    stop: () => child.connected && child.disconnect(),
  };
}

/** Kills the process groups of runs still alive at the end (a shell run's pid is its group). */
function killOrphans(orphans) {
  for (const { pid } of orphans) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

async function main() {
  const random = seeded(options.seed);
  const durationMs = Math.round(options.minutes * 60_000);
  const dir = mkdtempSync(join(tmpdir(), 'ursa-soak-'));
  const snapshot = snapshotDist();
  const { dist } = snapshot;
  const all = Array.from({ length: options.schedulers }, (_, i) => i);
  let database;
  const proxies = [];
  const stores = [];
  if (options.store === 'sqlite') {
    const half = Math.ceil(all.length / 2);
    stores.push({ name: 'steady', location: join(dir, 'steady.db'), indices: all.slice(0, half) });
    stores.push({ name: 'chaos', location: join(dir, 'chaos.db'), indices: all.slice(half) });
  } else {
    database = await freshDatabase(options.db);
    stores.push({ name: 'postgres', location: database.url, indices: all });
  }

  const marksFile = join(dir, 'marks.txt');
  const witness = await startWitness(join(dir, 'witness.txt'));
  const script = join(dir, 'mark.sh');
  copyFileSync(join(ROOT, 'soak', 'mark.sh'), script);
  const marks = { script, file: marksFile, port: witness.port, seed: options.seed };

  const memory = { steady: [], peaks: new Map() };
  let started = 0;
  const fleet = new Fleet({
    dist,
    dir,
    seed: options.seed,
    restartDelay: () => 500 + random() * 2500,
    onMemory: (slot, sample) => {
      const peak = memory.peaks.get(slot.name) ?? 0;
      memory.peaks.set(slot.name, Math.max(peak, sample.rss));
      if (slot.role === 'steady' && slot.incarnation === 1 && started > 0)
        memory.steady.push({ t: sample.at - started, rss: sample.rss, heapUsed: sample.heapUsed });
    },
  });
  let failed = false;
  try {
    for (const store of stores) {
      const folder = writeProject(join(dir, `project-${store.name}`), store.indices, marks);
      const applied = await applyProject(dist, store.location, folder);
      store.appliedAt = Date.now();
      progress(`${store.name}: ${applied} documents applied`);
    }
    if (options.store === 'sqlite') {
      fleet.add({ name: 'steady', role: 'steady', db: stores[0].location, exclusive: true });
      fleet.add({ name: 'chaos', role: 'chaos', db: stores[1].location, exclusive: true });
    } else {
      // Each worker through its own proxy, so that its connections alone can be cut.
      const server = new URL(options.db);
      const target = { host: server.hostname, port: Number(server.port || 5432) };
      const add = async (name, role) => {
        const proxy = await startProxy(target);
        proxies.push(proxy);
        const slot = fleet.add({
          name,
          role,
          db: proxy.url(database.url),
          exclusive: false,
          hold: proxy.restored,
        });
        slot.proxy = proxy;
      };
      await add('steady', 'steady');
      for (let k = 1; k < options.workers; k++) await add(`chaos-${k}`, 'chaos');
    }
    await Promise.all(fleet.slots.map((slot) => fleet.start(slot)));
    started = Date.now();
    progress(`${fleet.slots.length} workers ready; faults for ${options.minutes} min (seed ${options.seed})`);

    const faults = new Map();
    const arm = (point, action) => (slot) => {
      if (!fleet.send(slot, { type: 'arm', point, action })) return false;
      if (action === 'kill') slot.current.expected = `SIGKILL at ${point}`;
      return true;
    };
    const FAULTS = [
      { name: 'SIGKILL', weight: 4, targets: 'chaos', apply: (s) => fleet.kill(s, 'SIGKILL', 'SIGKILL') },
      { name: 'SIGKILL at afterClaim', weight: 1, targets: 'chaos', apply: arm('afterClaim', 'kill') },
      { name: 'SIGKILL at beforeEnd', weight: 1, targets: 'chaos', apply: arm('beforeEnd', 'kill') },
      {
        name: 'SIGTERM (graceful restart)',
        weight: 1,
        targets: 'chaos',
        apply: (s) => fleet.kill(s, 'SIGTERM', 'SIGTERM'),
      },
      { name: 'crash at afterClaim', weight: 1, targets: 'any', apply: arm('afterClaim', 'crash') },
      { name: 'crash at beforeEnd', weight: 1, targets: 'any', apply: arm('beforeEnd', 'crash') },
      {
        name: `stalled event loop (${STALL_MS[0] / 1000}-${STALL_MS[1] / 1000} s)`,
        weight: 1,
        // Not the steady worker: a stall past its lease with engine calls in flight makes the
        // watchdog end the worker process, and the memory verdict needs one process all through.
        targets: 'chaos',
        apply: (s) => {
          const ms = between(random, STALL_MS);
          return fleet.send(s, { type: 'stall', ms }) && `${ms} ms`;
        },
      },
    ];
    if (database !== undefined)
      FAULTS.push({
        name: 'PostgreSQL connections terminated',
        weight: 1,
        targets: 'none',
        apply: () => database.terminate().then(() => true),
      });
    if (database !== undefined)
      FAULTS.push({
        name: `one worker's connections cut (${CUT_MS[0] / 1000}-${CUT_MS[1] / 1000} s)`,
        weight: 1,
        targets: 'any',
        apply: (s) => {
          const ms = between(random, CUT_MS);
          s.proxy.cut(ms);
          return `${ms} ms`;
        },
      });

    const end = started + durationMs;
    const sampler = setInterval(() => {
      for (const slot of fleet.live()) fleet.send(slot, { type: 'sample', gc: slot.role === 'steady' });
    }, SAMPLE_MS);
    let nextProgress = started + PROGRESS_MS;
    while (Date.now() < end) {
      await sleep(Math.min(2000 + random() * 6000, end - Date.now()));
      if (Date.now() >= end) break;
      const fault = pick(random, FAULTS);
      const candidates =
        fault.targets === 'none'
          ? [undefined]
          : fleet.live().filter((slot) => fault.targets === 'any' || slot.role === 'chaos');
      if (candidates.length === 0) continue;
      const target = candidates[Math.floor(random() * candidates.length)];
      const applied = await fault.apply(target);
      if (applied) {
        faults.set(fault.name, (faults.get(fault.name) ?? 0) + 1);
        // The timeline, to read the marks and logs against (kept with --keep or on failure).
        const detail = typeof applied === 'string' ? ` ${applied}` : '';
        appendFileSync(
          join(dir, 'faults.txt'),
          `${new Date().toISOString()} ${fault.name} ${target?.current?.tag ?? '-'}${detail}\n`,
        );
      }
      if (Date.now() >= nextProgress) {
        nextProgress += PROGRESS_MS;
        const last = memory.steady[memory.steady.length - 1];
        const injected = [...faults.values()].reduce((a, b) => a + b, 0);
        progress(
          `${clock(Date.now() - started)} faults ${injected}, worker exits ${fleet.exits.length}` +
            (last === undefined ? '' : `, steady worker RSS ${mib(last.rss)} heap ${mib(last.heapUsed)}`),
        );
      }
    }
    const chaosEnd = Date.now();
    for (const slot of fleet.slots) fleet.send(slot, { type: 'disarm' });
    for (const proxy of proxies) proxy.restore();
    progress(`${clock(chaosEnd - started)} faults over; calm for ${CALM_MS / 1000} s, then a graceful stop`);
    await sleep(500);
    const allLive = await fleet.allLive();
    await sleep(CALM_MS);
    clearInterval(sampler);
    const exitsDuringSoak = fleet.exits.length;
    const slowStops = await fleet.stopAll();
    // What the witness sees last (a run that ended with the stop) is a millisecond behind.
    await sleep(500);
    const open = await witness.open();
    killOrphans(open.map(({ id }) => ({ pid: Number(id.split(' ')[0]) })).filter((o) => o.pid > 1));
    await sleep(200);

    const cpu = process.cpuUsage();
    progress(
      `accounting (the driver used ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s CPU${proxies.length > 0 ? ', its proxies included' : ''})`,
    );
    const to = Math.floor(chaosEnd / 1000) * 1000;
    const accounts = [];
    for (const store of stores) {
      const from = Math.floor(store.appliedAt / 1000) * 1000 + 1000;
      accounts.push({ store, from, to, ...(await accountStore(dist, { ...store, from, to })) });
    }
    const entries = accountEntries(fleet.slots.flatMap((slot) => slot.files.map((f) => f.entries)));
    const processes = accountMarks(marksFile, join(dir, 'witness.txt'), open);
    for (const account of accounts)
      account.marks = marksOf(processes, new Set(account.store.indices.map(schedulerName)));
    const mem = judgeMemory(memory.steady, durationMs);
    const unexpected = fleet.exits.slice(0, exitsDuringSoak).filter((e) => e.expected === undefined);
    const report = {
      options,
      dir,
      database: database?.name,
      durationMs,
      chaosMs: chaosEnd - started,
      faults,
      accounts,
      entries,
      processes,
      memory: mem,
      peaks: memory.peaks,
      exits: exitsDuringSoak,
      exitList: fleet.exits.slice(0, exitsDuringSoak),
      unexpected,
      allLive,
      slowStops,
      problems: fleet.problems(),
    };
    failed = print(report);
  } catch (error) {
    failed = true;
    fleet.killAll();
    process.stderr.write(`soak: ${error.stack ?? error}\n`);
    process.exitCode = 1;
  } finally {
    witness.stop();
    await Promise.all(proxies.map((proxy) => proxy.close()));
    snapshot.remove();
    if (failed || options.keep) {
      process.stdout.write(`kept: ${dir}${database === undefined ? '' : ` and database ${database.name}`}\n`);
    } else {
      rmSync(dir, { recursive: true, force: true });
      await database?.drop();
    }
  }
  if (failed) process.exitCode = 1;
}

const between = (random, [min, max]) => Math.round(min + random() * (max - min));

function print(r) {
  const { options: o, accounts, entries, memory: m } = r;
  const total = (key) => accounts.reduce((sum, a) => sum + (typeof key === 'function' ? key(a) : a[key]), 0);
  const columns =
    accounts.length > 1 ? [...accounts.map((a) => a.store.name), 'total'] : [accounts[0].store.name];
  const row = (label, key, must = '') => {
    const values = accounts.map((a) => (typeof key === 'function' ? key(a) : a[key]));
    const cells = values.map((v) => formatCount(v));
    if (accounts.length > 1) cells.push(formatCount(values.reduce((a, b) => a + b, 0)));
    return [label, ...cells, must];
  };
  const outcomeNames = [...new Set(accounts.flatMap((a) => [...a.outcomes.keys()]))].sort();
  const duplicateRuns = total((a) => a.doubled.length);
  const unaccounted = total((a) => a.missing.length);
  const leftRunning = total((a) => a.leftRunning + a.activeProcesses);
  const rows = [
    row('schedulers', 'schedulers'),
    row('occurrences in the window', 'occurrences'),
    row('runs in the window', 'runs'),
    ...outcomeNames.map((name) => row(`  ${name}`, (a) => a.outcomes.get(name) ?? 0)),
    row('  coalesced runs', 'coalescedRuns'),
    row('occurrences run on their own', 'served'),
    row('occurrences absorbed by a coalesced run', 'absorbed'),
    row('duplicate runs (an occurrence served twice)', (a) => a.doubled.length, 'must be 0'),
    row('unaccounted occurrences', (a) => a.missing.length, 'must be 0'),
    row('left running (runs, processes)', (a) => a.leftRunning + a.activeProcesses, 'must be 0'),
    row('queued, released by the final stop for the next worker', (a) => a.releasedQueued),
    row('shell runs, from their marks (the whole soak)', (a) => a.marks.started),
    row('  ended by themselves', (a) => a.marks.exited),
    row('  ended on SIGTERM (timeout, stop, shutdown)', (a) => a.marks.terminated),
    row('  killed (no end mark), gone before the stop', (a) => a.marks.killed),
    row('  alive after the final stop (orphans)', (a) => a.marks.orphans, 'must be 0'),
    row('  end unknown (never reached the witness)', (a) => a.marks.unknown, 'must be 0'),
    row('overlapping runs of a skip scheduler (marks)', (a) => a.marks.overlaps, 'must be 0'),
    row('occurrences started twice (marks)', (a) => a.marks.duplicates, 'must be 0'),
  ];
  const lines = [];
  const storeText =
    o.store === 'sqlite'
      ? 'SQLite: a steady worker and a chaos worker (killed and restarted), each on its own file with half the schedulers'
      : `PostgreSQL ${redact(o.db)} (fresh database ${r.database}): ${o.workers} workers, one steady, ${o.workers - 1} killed and restarted`;
  lines.push(
    `Ursa soak: ${o.minutes} min of faults, ${formatCount(o.schedulers)} schedulers (most every second), seed ${o.seed}`,
    storeText,
    `window: the occurrences from ${accounts.map((a) => `${new Date(a.from).toISOString()}${accounts.length > 1 ? ` (${a.store.name})` : ''}`).join(', ')}` +
      ` to ${new Date(accounts[0].to).toISOString()}; then ${CALM_MS / 1000} s calm and a graceful stop`,
    '',
    formatTable(
      ['', ...columns, ''],
      rows.map((cells) => cells.map(String)),
      { textColumns: 1 },
    ),
    '',
  );
  const engineDuplicates = entries.duplicates.length;
  lines.push(
    formatTable(
      ['engine soak', 'count', ''],
      [
        ['engine calls (the whole soak, calm included)', formatCount(entries.entries), ''],
        ['occurrences entered twice', formatCount(engineDuplicates), 'must be 0'],
      ],
    ),
    '',
  );
  const p = r.processes;
  const unread = p.torn + p.endWithoutStart + p.unidentified;
  if (unread > 0)
    lines.push(
      `marks naming no run: ${p.torn} torn lines, ${p.endWithoutStart} ends without a start, ${p.unidentified} witness connections without an id`,
      '',
    );
  const faultRows = [...r.faults.entries()].map(([name, n]) => [name, formatCount(n)]);
  faultRows.push(['worker exits (each restarted)', formatCount(r.exits)]);
  faultRows.push([
    `  ${SELF_FENCE}`,
    formatCount(r.exitList.filter((e) => e.expected === SELF_FENCE).length),
  ]);
  faultRows.push([
    '  unexpected: failed in their start-up',
    formatCount(r.unexpected.filter((e) => !e.started).length),
  ]);
  faultRows.push([
    '  unexpected: died while running',
    formatCount(r.unexpected.filter((e) => e.started).length),
  ]);
  lines.push(formatTable(['fault injected', 'count'], faultRows), '');
  lines.push(
    'engine faults: each soak run fails with p 1 %, runs slow (1-8 s) or past its 3 s timeout now and then;',
  );
  lines.push(
    'shell schedulers time out (1 s), exit 3, or run 2-12 s (overlap: skip, every second); overlap, misfire',
    'and catch-up-window schedulers skip and queue',
    o.store === 'sqlite'
      ? "the cut connection is PostgreSQL-only (on SQLite the worker is its store's one serving process): not injected"
      : "a cut connection: the worker's own TCP proxy resets its connections and refuses new ones, then lets them through",
    '',
  );

  const memRows = [];
  if (m.start !== undefined) {
    memRows.push(['steady worker RSS', mib(m.start.rss), mib(m.end.rss)]);
    memRows.push(['steady worker heap after GC', mib(m.start.heapUsed), mib(m.end.heapUsed)]);
  }
  lines.push(formatTable(['memory', 'start', 'end'], memRows));
  if (m.halves !== undefined) {
    lines.push(
      `after the warm-up (${Math.round(m.warmupMs / 1000)} s), median of each half: heap ${mib(m.halves.heap[0])} → ${mib(m.halves.heap[1])}, ` +
        `RSS ${mib(m.halves.rss[0])} → ${mib(m.halves.rss[1])}; trend heap ${(m.slopes.heap / MIB).toFixed(2)} MiB/min, RSS ${(m.slopes.rss / MIB).toFixed(2)} MiB/min`,
    );
  }
  lines.push(`memory: ${m.why}`);
  const peaks = [...r.peaks.entries()].map(([name, rss]) => `${name} ${mib(rss)}`).join(', ');
  lines.push(`peak RSS per worker slot: ${peaks}`, '');

  if (r.problems.length > 0) {
    lines.push('worker log lines at warn and above (the faults cause most), by message:');
    for (const { message, count } of r.problems.slice(0, 10))
      lines.push(`  ${formatCount(count).padStart(7)}  ${message}`);
    lines.push('');
  }
  const problems = [];
  if (duplicateRuns > 0) problems.push(`${duplicateRuns} duplicate runs`);
  if (engineDuplicates > 0) problems.push(`${engineDuplicates} occurrences entered twice`);
  if (unaccounted > 0) problems.push(`${unaccounted} unaccounted occurrences`);
  if (p.overlaps.length > 0) problems.push(`${p.overlaps.length} overlapping runs of skip schedulers`);
  if (p.duplicates.length > 0) problems.push(`${p.duplicates.length} shell occurrences started twice`);
  if (p.orphans.length > 0) problems.push(`${p.orphans.length} shell runs alive after the stop`);
  const unknownEnds = total((a) => a.marks.unknown);
  if (unknownEnds > 0) problems.push(`${unknownEnds} shell runs of unknown end`);
  if (leftRunning > 0) {
    const states = new Map();
    for (const a of accounts)
      for (const [state, n] of a.leftByState) states.set(state, (states.get(state) ?? 0) + n);
    const detail = [...states].map(([state, n]) => `${n} ${state}`).join(', ');
    problems.push(
      `${leftRunning} left running (${detail}${detail === '' ? '' : ', '}processes ${total('activeProcesses')})`,
    );
  }
  if (m.growing === true) problems.push(`memory grows (${m.why})`);
  // A soak long enough to judge whose steady worker did not live through it judged nothing.
  if (m.growing === null && r.durationMs >= JUDGED_FROM_MS)
    problems.push('memory not judged: the steady worker did not live through the soak');
  const failedStarts = r.unexpected.filter((e) => !e.started).length;
  const died = r.unexpected.length - failedStarts;
  if (died > 0) problems.push(`${died} workers died while running`);
  if (failedStarts > 0) problems.push(`${failedStarts} worker start-ups failed`);
  if (!r.allLive) problems.push('a worker did not come back after the faults');
  if (r.slowStops.length > 0) problems.push(`graceful stop timed out: ${r.slowStops.join(', ')}`);
  const examples = [
    ...accounts.flatMap((a) =>
      a.missing.slice(0, 5).map((x) => `unaccounted ${x.name}@${new Date(x.at).toISOString()}`),
    ),
    ...accounts.flatMap((a) =>
      a.doubled.slice(0, 5).map((x) => `served ${x.count}× ${x.name}@${new Date(x.at).toISOString()}`),
    ),
    ...entries.duplicates
      .slice(0, 5)
      .map((x) => `entered ${x.count}× ${x.name}@${new Date(x.at).toISOString()}`),
    ...p.overlaps
      .slice(0, 5)
      .map(
        (x) =>
          `overlap ${x.scheduler}: ${x.run.scheduledFor} started ${iso(x.run.startUs)} while ${x.previous.scheduledFor} ` +
          `(pid ${x.previous.pid}, started ${iso(x.previous.startUs)}, ${describeEnd(x.previous)}) ran, ${Number.isFinite(x.ms) ? `${(x.ms / 1000).toFixed(1)} s` : 'to the end'}`,
      ),
    ...p.duplicates.slice(0, 5).map((x) => `started ${x.count}× ${x.scheduler}@${x.scheduledFor}`),
    ...p.orphans
      .slice(0, 5)
      .map(
        (x) => `alive after the stop: ${x.scheduler}@${x.scheduledFor} (pid ${x.pid}; killed by the soak)`,
      ),
    ...accounts.flatMap((a) =>
      a.leftExamples.map(
        (x) =>
          `left ${x.state} ${x.name}@${new Date(x.at).toISOString()} (claimed ${new Date(Number(x.claimed_at)).toISOString()} by ${x.worker_id})`,
      ),
    ),
    ...r.unexpected
      .slice(0, 5)
      .map(
        (x) =>
          `unexpected exit of ${x.tag} ${x.started ? 'while running' : 'in its start-up'}: code ${x.code}, signal ${x.signal} (its log: worker-${x.tag}.log)`,
      ),
  ];
  for (const line of examples) lines.push(`  ${line}`);
  const verdict =
    problems.length === 0
      ? `PASS: ${formatCount(total('runs'))} runs, 0 duplicates, 0 unaccounted of ${formatCount(total('occurrences'))} occurrences, ` +
        `0 overlaps of ${formatCount(p.started.length)} shell runs, ` +
        `memory ${m.growing === null ? 'not judged (too short)' : 'steady'}`
      : `FAIL: ${problems.join('; ')}`;
  lines.push(`verdict: ${verdict}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  return problems.length > 0;
}

await main();
