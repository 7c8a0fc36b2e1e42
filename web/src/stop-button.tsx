import type { Api, Scope } from './api.js';
import { ConfirmDialog, useModal } from './confirm-dialog.js';
import { useAction } from './use-action.js';

/** The reason a stop from the editor leaves in the run log and its END line. */
const REASON = 'stopped from the web editor';

/**
 * Stop for a running run's process, asked first in a dialog: the process is stopped on whichever
 * worker runs it, and its run ends cancelled. Says what happened in its own status line, which
 * stays once the run has `ended` (the button does not): a stop can end the run before the page
 * has shown what was asked.
 */
export function StopButton({
  api,
  scope,
  processId,
  correlationId,
  ended = false,
  onStopped,
}: {
  api: Api;
  scope: Scope;
  processId: string;
  correlationId: string;
  ended?: boolean;
  onStopped: () => void;
}) {
  const modal = useModal();
  const action = useAction();
  const stop = () =>
    action.run(
      'Stopping',
      async () => {
        const result = await api.stopProcess(scope, processId, REASON);
        onStopped();
        return result.stopping
          ? `Stopping ${correlationId}: it ends cancelled.`
          : `${correlationId} had already ended or was being stopped.`;
      },
      modal.close,
    );
  return (
    <span class="stop">
      {!ended && (
        <>
          <button type="button" class="danger" onClick={modal.open} disabled={action.busy}>
            Stop…
          </button>{' '}
        </>
      )}
      <span role="status" class={action.said.error ? 'error' : undefined}>
        {action.said.text}
      </span>
      <ConfirmDialog
        modal={modal}
        id={`stop-${processId}`}
        title="Stop this run?"
        confirm="Stop run"
        danger
        busy={action.busy}
        onConfirm={() => void stop()}
      >
        <p>
          Ursa stops its process <code>{processId}</code> on whichever worker runs it; run{' '}
          <code>{correlationId}</code> ends cancelled, and its run log says it was {REASON}.
        </p>
      </ConfirmDialog>
    </span>
  );
}
