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

/** A run's state as a badge: coloured by its outcome once it ended, as pending until then. */
export function RunStateBadge({ run }: { run: RunFacts }) {
  const cls = run.outcome === 'pending' ? 'pending' : outcomeClass(run.outcome);
  return (
    <span class={`badge ${cls}`} data-state={run.state} data-outcome={run.outcome}>
      {runStateText(run)}
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
