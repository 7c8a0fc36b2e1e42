import type { OverlapPolicy } from '../../src/scheduler/definition.js';
import { ConfirmDialog, type Modal } from './confirm-dialog.js';

/** What each overlap policy does with a fire while a run of the scheduler is active. */
const WHILE_ACTIVE: Record<OverlapPolicy, string> = {
  skip: 'it is skipped',
  queue: 'it waits for the active run to end (one waiting run at most; more fold into it)',
  cancelPrevious: 'the active run is stopped first',
};

/**
 * Asks before a manual fire: it runs the saved document now, through the scheduler's overlap
 * policy like any occurrence, so the person knows what happens when a run is already active.
 */
export function FireDialog({
  modal,
  name,
  overlap,
  dirty,
  busy,
  onConfirm,
}: {
  modal: Modal;
  name: string;
  /** The saved document's policy; undefined while it does not load. */
  overlap: OverlapPolicy | undefined;
  dirty: boolean;
  busy: boolean;
  onConfirm: () => void;
}) {
  return (
    <ConfirmDialog
      modal={modal}
      id="fire"
      title={`Fire ${name} now?`}
      confirm="Fire"
      busy={busy}
      onConfirm={onConfirm}
    >
      <p>
        It starts a run now, outside its schedule, through its overlap policy
        {overlap === undefined ? (
          ''
        ) : (
          <>
            {' '}
            (<code>{overlap}</code>)
          </>
        )}
        : if a run is active,{' '}
        {overlap === undefined ? 'the policy decides whether it starts' : WHILE_ACTIVE[overlap]}.
      </p>
      {dirty && <p>It runs the saved version, not your unsaved changes.</p>}
    </ConfirmDialog>
  );
}
