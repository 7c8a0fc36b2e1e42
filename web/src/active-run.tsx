import type { Api, RunSummary, Scope } from './api.js';
import { routeHash } from './route.js';
import { StopButton } from './stop-button.js';

/** The newest run of `runs` (newest first) that has started and not ended, with a process. */
export function activeRun(runs: readonly RunSummary[] | undefined): RunSummary | undefined {
  return runs?.find((r) => r.startedAt !== null && r.endedAt === null && r.processId !== null);
}

/** The scheduler's active run, as of its run history's last load, with Stop. */
export function ActiveRun({
  api,
  scope,
  name,
  runs,
  onStopped,
}: {
  api: Api;
  scope: Scope;
  name: string;
  runs: readonly RunSummary[] | undefined;
  onStopped: () => void;
}) {
  const active = activeRun(runs);
  if (active === undefined || active.processId === null) return null;
  return (
    <section class="active-run" aria-labelledby="active-title">
      <h2 id="active-title">Active run</h2>
      {/* A div, not a p: Stop's dialog (a heading, a form) cannot be inside a paragraph. */}
      <div>
        <a href={routeHash({ view: 'run', ...scope, name, id: active.correlationId })}>
          {active.correlationId}
        </a>{' '}
        is running.{' '}
        <StopButton
          api={api}
          scope={scope}
          processId={active.processId}
          correlationId={active.correlationId}
          onStopped={onStopped}
        />
      </div>
    </section>
  );
}
