import type { Api, Scope } from './api.js';
import { Crumbs } from './crumbs.js';
import { shortInstant } from './format.js';
import { LIVE_MS, useInterval, useLoad } from './hooks.js';
import { useFocusKept } from './keep-focus.js';
import { routeHash } from './route.js';
import { RunStateBadge } from './run-state.js';
import { StopButton } from './stop-button.js';

/**
 * A scheduler's system session (`_ursascheduler_<name>`): the runs and processes it holds, with
 * Stop beside a running one (issue #23). Followed every {@link LIVE_MS} while one of its runs has
 * not ended and the view is open.
 */
export function SessionView({
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
  const runs = useLoad(
    () => api.runs(scope, scheduler, 100),
    `${scope.tenant}/${scope.project}/${scheduler}/100`,
  );
  const inSession = (runs.data?.runs ?? []).filter((r) => r.sessionId === id);
  const live = inSession.some((r) => r.state !== 'ended' && r.state !== 'skipped');
  useInterval(runs.reload, LIVE_MS, live);
  // A Stop leaves with its run's end, the focus with it when it had it.
  useFocusKept();
  return (
    <section aria-labelledby="session-title">
      <Crumbs scope={scope} scheduler={scheduler} here={id} />
      <h1 id="session-title">
        Session <code>{id}</code>
      </h1>
      <p class="muted">The processes {scheduler} started in this session, from its last 100 runs.</p>
      {runs.error !== undefined && (
        <p class="error" role="alert">
          {runs.error.message}
        </p>
      )}
      <ul>
        {inSession.map((r) => (
          <li key={r.correlationId}>
            {r.processId === null ? (
              'no process'
            ) : (
              <a href={routeHash({ view: 'process', ...scope, name: scheduler, id: r.processId })}>
                {r.processId}
              </a>
            )}{' '}
            — <RunStateBadge run={r} />, scheduled for {shortInstant(r.scheduledFor)} (
            <a href={routeHash({ view: 'run', ...scope, name: scheduler, id: r.correlationId })}>run</a>)
            {r.processId !== null && r.startedAt !== null && r.endedAt === null && (
              <>
                {' '}
                <StopButton
                  api={api}
                  scope={scope}
                  processId={r.processId}
                  correlationId={r.correlationId}
                  onStopped={runs.reload}
                />
              </>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
