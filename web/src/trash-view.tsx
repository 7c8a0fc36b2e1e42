import { useState } from 'preact/hooks';
import type { Api, Scope } from './api.js';
import { ConfirmDialog, useModal } from './confirm-dialog.js';
import { shortInstant } from './format.js';
import { useLoad } from './hooks.js';
import { useFocusKept } from './keep-focus.js';
import { routeHash } from './route.js';
import { useAction } from './use-action.js';

const TRASH = '_vance/trash/';
const SCHEDULER = /^_vance\/scheduler\/([^/]+)\.yaml$/;

/** `_vance/trash/<uuid>_<file name>` → its file name. */
function fileName(path: string): string {
  return path.slice(TRASH.length).replace(/^[0-9a-f-]{36}_/, '');
}

/**
 * The project's trash (issue #23): deleted schedulers, one-shots that fired, any document moved
 * to `_vance/trash/`, newest first, each with Restore — back to the path it was deleted from.
 */
export function TrashView({ api, scope }: { api: Api; scope: Scope }) {
  const trash = useLoad(() => api.documents(scope, TRASH), `${scope.tenant}/${scope.project}/trash`);
  const [chosen, setChosen] = useState<string | undefined>(undefined);
  // The scheduler restored last, linked beside the message.
  const [restored, setRestored] = useState<string | undefined>(undefined);
  const action = useAction();
  const modal = useModal();
  // A restored document's row (and its Restore button, focused) leaves when the trash is read again.
  useFocusKept();
  const documents = [...(trash.data?.documents ?? [])].sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : -1));

  const restore = (path: string) =>
    action.run(
      'Restoring',
      async () => {
        setRestored(undefined);
        const result = await api.restoreTrashed(scope, path);
        setRestored(SCHEDULER.exec(result.path)?.[1]);
        trash.reload();
        return `Restored ${fileName(path)} to ${result.path}.`;
      },
      modal.close,
    );

  return (
    <section class="trash-view" aria-labelledby="trash-title">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href={routeHash({ view: 'list', ...scope })}>
          {scope.tenant}/{scope.project}
        </a>{' '}
        / <span aria-current="page">trash</span>
      </nav>
      <h1 id="trash-title">
        Trash of {scope.tenant}/{scope.project}
      </h1>
      <p class="muted">
        Deleted schedulers and one-shots that fired are kept here. Restore puts a document back where it was
        deleted from; a scheduler is picked up at once. A one-shot that fired cannot be restored as it is:
        write it anew with a later <code>at:</code>.
      </p>
      <p role="status" class={action.said.error ? 'status error' : 'status'}>
        {action.said.text}
        {restored !== undefined && !action.said.error && (
          <>
            {' '}
            <a href={routeHash({ view: 'edit', ...scope, name: restored })}>Open {restored}</a>
          </>
        )}
      </p>
      {trash.error !== undefined && (
        <p class="error" role="alert">
          {trash.error.message} [{trash.error.code}]
        </p>
      )}
      {trash.data !== undefined && documents.length === 0 && <p>The trash is empty.</p>}
      {documents.length > 0 && (
        <div class="table-wrap">
          <table class="trash">
            <caption class="sr-only">Documents in the trash, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Document</th>
                <th scope="col">Moved to the trash</th>
                <th scope="col">Created by</th>
                <th scope="col">
                  <span class="sr-only">Restore</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {documents.map((d) => (
                <tr key={d.path} data-trashed={fileName(d.path)}>
                  <th scope="row">
                    {fileName(d.path)}
                    <br />
                    <code class="muted">{d.path}</code>
                  </th>
                  <td>{shortInstant(d.updatedAt)}</td>
                  <td>{d.createdBy}</td>
                  <td>
                    <button
                      type="button"
                      disabled={action.busy}
                      onClick={() => {
                        setChosen(d.path);
                        modal.open();
                      }}
                    >
                      Restore {fileName(d.path)}…
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ConfirmDialog
        modal={modal}
        id="restore-trashed"
        title={`Restore ${chosen === undefined ? '' : fileName(chosen)}?`}
        confirm="Restore"
        busy={action.busy}
        onConfirm={() => chosen !== undefined && void restore(chosen)}
      >
        <p>
          It goes back to the path it was deleted from (refused while another document holds that path). A
          scheduler fires again from its next occurrence; a one-shot that was deleted before it fired, and
          whose time has passed, fires at once. A one-shot that fired is refused: it would not run again.
        </p>
      </ConfirmDialog>
    </section>
  );
}
