import type { RunSummary } from './api.js';
import { outcomeClass } from './format.js';
import { routeHash } from './route.js';

/** What the state and links of a run need: a run of the list or a run's detail. */
type RunFacts = Pick<
  RunSummary,
  'correlationId' | 'state' | 'outcome' | 'waitingBehind' | 'foldedInto' | 'folded'
>;

/** Where runs of one scheduler are linked to. */
interface RunScope {
  readonly tenant: string;
  readonly project: string;
  readonly name: string;
}

/**
 * A run's state in words, with its outcome once it has one: `queued`, `running`, `ended:
 * completed`, `skipped: skipped_overlap` — the one vocabulary of every surface.
 */
export function runStateText(run: RunFacts): string {
  return run.outcome === 'pending' ? run.state : `${run.state}: ${run.outcome}`;
}

/**
 * A run's state in one short word, so a badge fits a narrow column: the outcome once it ended
 * (`completed`, `failed`, `cancelled`), the state otherwise (`queued`, `running`, `skipped`).
 */
export function runStateWord(run: RunFacts): string {
  return run.state === 'ended' && run.outcome !== 'pending' ? run.outcome : run.state;
}

/**
 * A run's state as a badge, coloured by its outcome once it ended, as pending until then. It
 * shows {@link runStateWord}; the rest of {@link runStateText} is screen-reader-only text around
 * it, so a screen reader and the badge's text say the whole `ended: completed`, and its title
 * shows it on hover.
 */
export function RunStateBadge({ run }: { run: RunFacts }) {
  const cls = run.outcome === 'pending' ? 'pending' : outcomeClass(run.outcome);
  const word = runStateWord(run);
  // `ended: ` before the outcome shown, or `: skipped_overlap` after the state shown.
  const before = word === run.state ? '' : `${run.state}: `;
  const after = word === run.state && run.outcome !== 'pending' ? `: ${run.outcome}` : '';
  return (
    <span class={`badge ${cls}`} data-state={run.state} data-outcome={run.outcome} title={runStateText(run)}>
      {before !== '' && <span class="sr-only">{before}</span>}
      {word}
      {after !== '' && <span class="sr-only">{after}</span>}
    </span>
  );
}

/** A link to another run of the same scheduler, by its correlation id. */
function RunLink({ scope, id }: { scope: RunScope; id: string }) {
  return (
    <a href={routeHash({ view: 'run', ...scope, id })}>
      <code>{id}</code>
    </a>
  );
}

/**
 * How a run relates to the others of its lane, with links both ways: the run it waits (or
 * waited) behind, the waiting run it was folded into, the requests folded into it. Nothing when
 * it has no such link.
 */
export function RunLinks({ run, scope }: { run: RunFacts; scope: RunScope }) {
  const { waitingBehind, foldedInto, folded } = run;
  if (waitingBehind === null && foldedInto === null && folded === null) return null;
  return (
    <ul class="run-links">
      {waitingBehind !== null && (
        <li>
          {run.state === 'queued' ? 'Waiting behind' : 'Waited behind'}{' '}
          <RunLink scope={scope} id={waitingBehind} />, the run that was active
        </li>
      )}
      {foldedInto !== null && (
        <li>
          Folded into <RunLink scope={scope} id={foldedInto} />, which was already waiting: this request added
          no run
        </li>
      )}
      {folded !== null && (
        <li>
          {folded.count === 1 ? '1 later request was' : `${folded.count} later requests were`} folded into
          this run:{' '}
          {folded.first.map((id, i) => (
            <span key={id}>
              {i > 0 && ', '}
              <RunLink scope={scope} id={id} />
            </span>
          ))}
          {folded.count > folded.first.length && ` and ${folded.count - folded.first.length} more`}
        </li>
      )}
    </ul>
  );
}

/** `run_8f3a2c1d` for `run_8f3a2c1d-…`: enough to tell the runs of one table apart. */
function shortId(id: string): string {
  return /^(run_[0-9a-f]{8})[0-9a-f-]{28}$/.exec(id)?.[1] ?? id;
}

/** A link to another run by its short id; the whole id is its title. */
function ShortRunLink({ scope, id }: { scope: RunScope; id: string }) {
  return (
    <a href={routeHash({ view: 'run', ...scope, id })} title={id}>
      <code>{shortId(id)}</code>
    </a>
  );
}

/**
 * {@link RunLinks} for a table cell of the run history (issue #23): the same links in a few
 * words each — `waits behind run_…`, `folded into run_…`, `2 folded in` — so the columns fit
 * beside the editor. Nothing when the run has no such link.
 */
export function RunLinksCell({ run, scope }: { run: RunFacts; scope: RunScope }) {
  const { waitingBehind, foldedInto, folded } = run;
  return (
    <>
      {waitingBehind !== null && (
        <span class="run-link">
          {run.state === 'queued' ? 'waits behind' : 'waited behind'}{' '}
          <ShortRunLink scope={scope} id={waitingBehind} />
        </span>
      )}
      {foldedInto !== null && (
        <span class="run-link">
          folded into <ShortRunLink scope={scope} id={foldedInto} />
        </span>
      )}
      {folded !== null && (
        <span class="run-link" title={folded.first.join(', ')}>
          {folded.count} folded in
        </span>
      )}
    </>
  );
}
