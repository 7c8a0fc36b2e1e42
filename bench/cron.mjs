import { loadCorpus } from './cron/corpus.mjs';
import { croner, cronParser, libraries, ursa } from './cron/libraries.mjs';
import { measure, timePerCall } from './lib/measure.mjs';
import { formatCount, formatTable } from './lib/table.mjs';

/**
 * Scenario `cron`: next() calls per second for Ursa, croner and cron-parser over one fixed
 * corpus, and how many corpus entries each peer answers differently from Ursa. It asserts nothing:
 * the numbers only compare libraries within one run.
 */

const ROUNDS = 7;
const MIN_ROUND_MS = 200;
const COMPARED_RESULTS = 5;

const peers = [croner, cronParser];

/** ISO-8601 UTC in whole seconds, the vectors' format. */
function iso(ms) {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** Parses every entry for one library; entries it refuses are `null` handles. */
function prepareAll(library, entries) {
  const handles = entries.map((entry) => {
    try {
      return library.prepare(entry);
    } catch {
      return null;
    }
  });
  const unsupported = entries.filter((_, i) => handles[i] === null).map((entry) => entry.id);
  return { handles, unsupported };
}

/**
 * Compares each entry both libraries read, outside any timing: `same[i]` tells whether the peer's
 * first results equal Ursa's (`null` where either cannot read the entry).
 */
function compare(entries, ursaHandles, peer, peerHandles) {
  const differences = [];
  const same = entries.map((entry, i) => {
    if (ursaHandles[i] === null || peerHandles[i] === null) return null;
    const expected = ursa.sequence(ursaHandles[i], COMPARED_RESULTS).map(iso);
    const actual = peer.sequence(peerHandles[i], COMPARED_RESULTS).map(iso);
    if (expected.join() === actual.join()) return true;
    const { id, expr, zone, from } = entry;
    differences.push({ id, expr, zone, from, ursa: expected, [peer.name]: actual });
    return false;
  });
  return { compared: same.filter((s) => s !== null).length, same, differences };
}

/** `--slowest[=N]`: also time each entry alone and list Ursa's N slowest (default 10). */
function parseSlowest(args) {
  const arg = args.find((a) => a === '--slowest' || a.startsWith('--slowest='));
  if (arg === undefined) return 0;
  const count = arg === '--slowest' ? 10 : Number(arg.slice('--slowest='.length));
  if (!Number.isInteger(count) || count < 1) {
    throw Object.assign(new Error(`${arg}: expected --slowest or --slowest=N (N >= 1)`), { usage: true });
  }
  return count;
}

/** Time per call of each entry alone, for Ursa's slowest entries and the peers on the same ones. */
function slowestEntries(entries, prepared, count) {
  const ursaHandles = prepared.get(ursa).handles;
  // Warm every library up on the whole corpus first, or the first entries would time the JIT.
  for (const library of libraries) {
    const sweep = library.makeSweep(prepared.get(library).handles.filter((h) => h !== null));
    timePerCall(sweep, { minBatchMs: 300, repeats: 1 });
  }
  const perEntry = entries.map((entry, i) => ({
    entry,
    i,
    us: ursaHandles[i] === null ? 0 : timePerCall(ursa.makeSweep([ursaHandles[i]])),
  }));
  perEntry.sort((a, b) => b.us - a.us);
  return perEntry.slice(0, count).map(({ entry, i, us }) => {
    const row = {
      id: entry.id,
      expr: entry.expr,
      zone: entry.zone,
      from: entry.from,
      microseconds: { ursa: us },
    };
    for (const peer of peers) {
      const handle = prepared.get(peer).handles[i];
      row.microseconds[peer.name] = handle === null ? null : timePerCall(peer.makeSweep([handle]));
    }
    return row;
  });
}

export async function run(args, { onProgress = () => {} } = {}) {
  const slowest = parseSlowest(args);
  const corpus = loadCorpus();
  const { entries } = corpus;

  const prepared = new Map(libraries.map((library) => [library, prepareAll(library, entries)]));
  const ursaHandles = prepared.get(ursa).handles;

  // Ursa alone on the whole corpus, then each peer beside Ursa on exactly the same entries, so
  // that every ratio compares the same work: once on all the entries the peer reads, once on
  // those it also answers as Ursa does (a peer that is slow where it answers differently, e.g.
  // searching years for a date that Ursa finds at once, weighs less there).
  const subjects = [];
  const addSubject = (name, library, handles, keep) => {
    const present = handles.filter((h, i) => h !== null && keep(i));
    if (!subjects.some((s) => s.name === name)) {
      subjects.push({ name, calls: present.length, sweep: library.makeSweep(present) });
    }
    return { name, entries: present.length };
  };
  const ursaAll = addSubject(ursa.name, ursa, ursaHandles, () => true);
  // Each pair: the peer and Ursa on the entries `keep` selects; Ursa's subject is reused when
  // that is all of Ursa's entries.
  const addPair = (peer, handles, label, keep) => {
    const both = (i) => ursaHandles[i] !== null && handles[i] !== null && keep(i);
    const peerSubject = addSubject(`${peer.name}${label}`, peer, handles, both);
    const ursaSubject =
      peerSubject.entries === ursaAll.entries
        ? ursaAll
        : addSubject(`ursa beside ${peer.name}${label}`, ursa, ursaHandles, both);
    return { peer: peerSubject.name, ursa: ursaSubject.name, entries: peerSubject.entries };
  };
  const rows = [];
  for (const peer of peers) {
    const { handles, unsupported } = prepared.get(peer);
    const { compared, same, differences } = compare(entries, ursaHandles, peer, handles);
    const all = addPair(peer, handles, '', () => true);
    const agreeing = addPair(peer, handles, ' (same answers)', (i) => same[i] === true);
    rows.push({ peer, unsupported, compared, differences, all, agreeing });
  }

  const rates = measure(subjects, { rounds: ROUNDS, minRoundMs: MIN_ROUND_MS, onProgress });
  const ratio = (pair) => ({
    entries: pair.entries,
    ursaCallsPerSecond: rates[pair.ursa].median,
    libraryCallsPerSecond: rates[pair.peer].median,
    ursaPerLibrary: rates[pair.ursa].median / rates[pair.peer].median,
  });

  const ursaUnsupported = prepared.get(ursa).unsupported;
  const report = {
    scenario: 'cron',
    corpus: { entries: entries.length, vectors: corpus.vectors, common: corpus.common },
    method: { rounds: ROUNDS, minRoundMs: MIN_ROUND_MS, comparedResults: COMPARED_RESULTS },
    libraries: [
      {
        name: ursa.name,
        version: ursa.version,
        callsPerSecond: rates[ursa.name].median,
        roundRates: rates[ursa.name].rates,
        entries: ursaAll.entries,
        unsupported: ursaUnsupported,
      },
      ...rows.map(({ peer, unsupported, compared, differences, all, agreeing }) => ({
        name: peer.name,
        version: peer.version,
        callsPerSecond: rates[peer.name].median,
        roundRates: rates[peer.name].rates,
        ursaPerLibrary: ratio(all).ursaPerLibrary,
        sameEntries: ratio(all),
        sameAnswers: ratio(agreeing),
        compared,
        different: differences.length,
        unsupported,
        differences,
      })),
    ],
    notes: libraries.flatMap((library) => library.notes),
  };
  if (slowest > 0) {
    onProgress(`timing each entry alone (--slowest=${slowest})`);
    report.slowest = slowestEntries(entries, prepared, slowest);
  }
  return report;
}

function formatSlowest(slowest) {
  const names = [ursa.name, ...peers.map((peer) => peer.name)];
  const micro = (us) => (us === null ? 'unsupported' : us.toFixed(2));
  const rows = slowest.map((row) => [
    `${row.id}  ${JSON.stringify(row.expr)} ${row.zone} from ${row.from}`,
    ...names.map((name) => micro(row.microseconds[name])),
  ]);
  return formatTable(['entry (slowest for Ursa first)', ...names.map((name) => `${name} µs/call`)], rows);
}

const ratioText = (value) => (value === undefined ? '-' : `${value.toFixed(1)}x`);

export function format(report) {
  const { corpus, method } = report;
  const peerRows = report.libraries.filter((lib) => lib.sameEntries !== undefined);
  const headers = [
    'library',
    'version',
    'calls/s (median)',
    'Ursa ÷ library',
    'same answers only',
    'compared',
    'different from Ursa',
    'unsupported',
  ];
  const rows = report.libraries.map((lib) => [
    lib.name,
    lib.version,
    formatCount(lib.callsPerSecond),
    ratioText(lib.sameEntries?.ursaPerLibrary),
    ratioText(lib.sameAnswers?.ursaPerLibrary),
    lib.compared === undefined ? '-' : String(lib.compared),
    lib.different === undefined ? '-' : String(lib.different),
    String(lib.unsupported.length),
  ]);
  const beside = (key) =>
    peerRows
      .map((lib) => {
        const r = lib[key];
        return `${lib.name}: ${r.entries} entries, Ursa ${formatCount(r.ursaCallsPerSecond)}/s vs ${formatCount(r.libraryCallsPerSecond)}/s`;
      })
      .join('; ');
  const lines = [
    `cron: next() calls per second over a fixed corpus of ${corpus.entries} entries ` +
      `(${corpus.vectors} valid reference vectors + ${corpus.common} common schedules)`,
    `median of ${method.rounds} rounds of >= ${method.minRoundMs} ms per library; ` +
      "one call = the next fire time after the entry's start instant (parsing not timed)",
    '',
    formatTable(headers, rows, { textColumns: 2 }),
    '',
    `- Ursa ÷ library: both medians on the entries that library reads (${beside('sameEntries')})`,
    `- same answers only: the same, on the entries where it also answers as Ursa does (${beside('sameAnswers')})`,
    `- compared: entries both read; different: any of the first ${method.comparedResults} next() results ` +
      '(UTC, whole seconds) differs from Ursa',
    '- unsupported: the library refuses the expression; left out of its timing and comparison',
    ...report.notes.map((note) => `- ${note}`),
  ];
  if (report.slowest) lines.push('', formatSlowest(report.slowest));
  return lines.join('\n');
}
