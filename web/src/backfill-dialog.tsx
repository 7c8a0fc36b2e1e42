import { useEffect, useState } from 'preact/hooks';
import type { TimeZone } from '../../src/cron/index.js';
import { defaultRange, readInstant } from './backfill-range.js';
import type { Modal } from './confirm-dialog.js';

/**
 * The dialog that asks for a backfill's range (issue #23): from a day ago until now by default,
 * as wall times in `zone`, the zone the editor shows (named beside the fields); what is typed is
 * read in that zone, or taken as it is with `Z` or an offset, and sent to the API as UTC instants.
 */
export function BackfillDialog({
  name,
  modal,
  zone,
  onSubmit,
}: {
  name: string | undefined;
  /** Opened by its button, it gives the focus back to it however it closes. */
  modal: Modal;
  /** The zone the editor shows its times in. */
  zone: TimeZone;
  /** `from` and `to` as UTC instants (`2026-05-14T06:00:00Z`). */
  onSubmit: (from: string, to: string) => void;
}) {
  const [from, setFrom] = useState(() => defaultRange(Date.now(), zone).from);
  const [to, setTo] = useState(() => defaultRange(Date.now(), zone).to);
  const [problem, setProblem] = useState<{ field: 'from' | 'to'; text: string } | undefined>();
  // Another zone shown: the range is filled in afresh in it.
  useEffect(() => {
    const range = defaultRange(Date.now(), zone);
    setFrom(range.from);
    setTo(range.to);
    setProblem(undefined);
  }, [zone.id]);
  const invalid = (field: 'from' | 'to') => problem?.field === field;
  const describedBy = (field: 'from' | 'to') =>
    invalid(field) ? 'backfill-zone backfill-problem' : 'backfill-zone';
  return (
    <dialog ref={modal.ref} aria-labelledby="backfill-title">
      <form
        method="dialog"
        onSubmit={(event) => {
          event.preventDefault();
          const start = readInstant(from, zone);
          const end = readInstant(to, zone);
          if ('problem' in start) return setProblem({ field: 'from', text: `From: ${start.problem}` });
          if ('problem' in end) return setProblem({ field: 'to', text: `To: ${end.problem}` });
          setProblem(undefined);
          onSubmit(start.instant, end.instant);
        }}
      >
        <h2 id="backfill-title">Backfill {name}?</h2>
        <p>
          Every past occurrence from one instant to the other that has no run yet runs, oldest first, one
          after another (at most 1,000). Each run counts against the project's run budget; one asked for twice
          still runs once.
        </p>
        <p id="backfill-zone" class="muted">
          Times in {zone.id}, the zone the editor shows; one with Z or an offset is taken as it is.
        </p>
        <label for="backfill-from">From (oldest occurrence)</label>
        <input
          id="backfill-from"
          type="text"
          value={from}
          aria-invalid={invalid('from')}
          aria-describedby={describedBy('from')}
          onInput={(event) => setFrom((event.target as HTMLInputElement).value)}
        />
        <label for="backfill-to">To (newest occurrence, not later than now)</label>
        <input
          id="backfill-to"
          type="text"
          value={to}
          aria-invalid={invalid('to')}
          aria-describedby={describedBy('to')}
          onInput={(event) => setTo((event.target as HTMLInputElement).value)}
        />
        {problem !== undefined && (
          <p id="backfill-problem" class="error" role="alert">
            {problem.text}
          </p>
        )}
        <div class="actions">
          <button type="button" onClick={modal.close}>
            Cancel
          </button>
          <button type="submit" class="primary">
            Backfill
          </button>
        </div>
      </form>
    </dialog>
  );
}
