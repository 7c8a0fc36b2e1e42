import { useState } from 'preact/hooks';
import type { Modal } from './confirm-dialog.js';

const DAY_MS = 86_400_000;

// An instant as the API takes it, to the second: 2026-05-14T06:00:00Z.
const isoSeconds = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;

/**
 * The dialog that asks for a backfill's range: from a day ago until now by default, as ISO-8601
 * instants (a local date-time without `Z` is read in the scheduler's zone).
 */
export function BackfillDialog({
  name,
  modal,
  onSubmit,
}: {
  name: string | undefined;
  /** Opened by its button, it gives the focus back to it however it closes. */
  modal: Modal;
  onSubmit: (from: string, to: string) => void;
}) {
  const [from, setFrom] = useState(() => isoSeconds(Date.now() - DAY_MS));
  const [to, setTo] = useState(() => isoSeconds(Date.now()));
  return (
    <dialog ref={modal.ref} aria-labelledby="backfill-title">
      <form
        method="dialog"
        onSubmit={(event) => {
          event.preventDefault();
          onSubmit(from.trim(), to.trim());
        }}
      >
        <h2 id="backfill-title">Backfill {name}?</h2>
        <p>
          Every past occurrence from one instant to the other that has no run yet runs, oldest first, one
          after another (at most 1,000). Each run counts against the project's run budget; one asked for twice
          still runs once.
        </p>
        <label for="backfill-from">From (oldest occurrence)</label>
        <input
          id="backfill-from"
          type="text"
          value={from}
          onInput={(event) => setFrom((event.target as HTMLInputElement).value)}
        />
        <label for="backfill-to">To (newest occurrence, not later than now)</label>
        <input
          id="backfill-to"
          type="text"
          value={to}
          onInput={(event) => setTo((event.target as HTMLInputElement).value)}
        />
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
