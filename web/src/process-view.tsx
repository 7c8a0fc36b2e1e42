import type { Api, Scope } from './api.js';
import { Crumbs } from './crumbs.js';
import { shortInstant } from './format.js';
import { LIVE_MS, useInterval, useLoad } from './hooks.js';
import { useFocusKept } from './keep-focus.js';
import { routeHash } from './route.js';
import { StopButton } from './stop-button.js';

/** The statuses of a process that has ended: it runs no more and cannot be stopped. */
const ENDED = new Set(['done', 'stopped', 'failed']);

/** Whether a process of this status is still active (ready, running, paused, blocked, suspended). */
export function processActive(status: string): boolean {
  return !ENDED.has(status);
}

/**
 * A process a run started (issue #23): status, exit code, output tails, and Stop while it is
 * active. The page follows the process every {@link LIVE_MS} while it is open and active, and
 * stops asking once it ended or the view closed (spec §10: a snapshot once it ended).
 */
export function ProcessView({
  api,
  scope,
  scheduler,
  id,
}: {
  api: Api;
  scope: Scope;
  scheduler: string;
  id: string;
}) {
  const process = useLoad(() => api.process(scope, id), `${scope.tenant}/${scope.project}/${id}`);
  const p = process.data;
  const active = p !== undefined && processActive(p.status);
  useInterval(process.reload, LIVE_MS, active);
  // Stop leaves with the process's end, the focus with it when it had it.
  useFocusKept();
  const ended = p !== undefined && !active ? `Process ${id} ended: ${p.status}` : '';
  return (
    <section aria-labelledby="process-title">
      <Crumbs scope={scope} scheduler={scheduler} here={id} />
      <h1 id="process-title">
        Process <code>{id}</code>
      </h1>
      <p role="status" class="sr-only" id="process-end">
        {ended}
      </p>
      {process.error !== undefined && (
        <p class="error" role="alert">
          {process.error.message} [{process.error.code}]
        </p>
      )}
      {p !== undefined && (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              {p.status}
              {p.exitCode !== null && <> (exit code {p.exitCode})</>}
              {p.reason !== null && <> — {p.reason}</>}
              {active && (
                <>
                  {' '}
                  <StopButton
                    api={api}
                    scope={scope}
                    processId={p.id}
                    correlationId={p.triggerOrigin.correlationId}
                    onStopped={process.reload}
                  />
                </>
              )}
            </dd>
            <dt>Recipe / engine</dt>
            <dd>
              {p.recipe} / {p.engine}
            </dd>
            <dt>Owner</dt>
            <dd>{p.ownerUser}</dd>
            <dt>Session</dt>
            <dd>
              <a href={routeHash({ view: 'session', ...scope, name: scheduler, id: p.sessionId })}>
                {p.sessionId}
              </a>
            </dd>
            <dt>Run</dt>
            <dd>
              <a
                href={routeHash({
                  view: 'run',
                  ...scope,
                  name: scheduler,
                  id: p.triggerOrigin.correlationId,
                })}
              >
                {p.triggerOrigin.correlationId}
              </a>{' '}
              ({p.triggerOrigin.trigger}, scheduled for {shortInstant(p.triggerOrigin.scheduledFor)})
            </dd>
            <dt>Created / started / ended</dt>
            <dd>
              {shortInstant(p.createdAt)} / {shortInstant(p.startedAt)} / {shortInstant(p.endedAt)}
            </dd>
            <dt>Params</dt>
            <dd>
              <code>{JSON.stringify(p.params)}</code>
            </dd>
          </dl>
          {p.initialMessage !== null && (
            <>
              <h2>Initial message</h2>
              <pre class="code">{p.initialMessage}</pre>
            </>
          )}
          {p.outputTail !== null && (
            <>
              <h2>Output (tail)</h2>
              <pre class="code">{p.outputTail}</pre>
            </>
          )}
          {p.errorTail !== null && (
            <>
              <h2>Error output (tail)</h2>
              <pre class="code">{p.errorTail}</pre>
            </>
          )}
        </>
      )}
    </section>
  );
}
