import type { RunDetail, RunPage } from '../contract/index.js';
import type { Runtime } from '../runtime/context.js';
import type { FeedPageRequest } from './feed.js';
import { runDetailView, runView } from './views.js';

/**
 * The runs of a scheduler as people and agents see them (issue #23): from the runs table, so that
 * a queued run shows as soon as it is claimed, by occurrence, each with its state in the one
 * vocabulary of every surface and its links to the runs of its lane. Instants in the views are
 * ISO-8601 UTC.
 */

/**
 * One page of the runs of scheduler `name` of (tenant, project), by occurrence, the latest first,
 * as the REST contract's `RunPage`: `page.before` is an occurrence instant (UTC ms) and
 * `nextCursor` the last run's, when an older run exists. With `visibleToAgents`, only runs that
 * were not `hidden` when claimed, and no links to other runs (an agent's view, spec §10b).
 *
 * @throws UrsaError `ARGUMENT_INVALID` for a `limit` that is not a whole number ≥ 1; a store error.
 */
export async function schedulerRunPage(
  rt: Pick<Runtime, 'repos'>,
  tenant: string,
  project: string,
  name: string,
  page: FeedPageRequest & { readonly visibleToAgents?: boolean },
): Promise<RunPage> {
  const agents = page.visibleToAgents === true;
  const found = await rt.repos.runs.page(
    { tenant, project, name },
    { limit: page.limit + 1, before: page.before, visibleToAgents: agents },
  );
  const shown = found.slice(0, page.limit);
  const folded = await rt.repos.runs.folded(
    shown.filter(({ run }) => run.waitingBehind !== null).map(({ run }) => run.correlationId),
  );
  const view = ({ run, processStatus }: (typeof shown)[number]) => {
    const full = runView(run, processStatus, folded.get(run.correlationId));
    // A linked run may have been claimed hidden: an agent is not told its id.
    return agents ? { ...full, waitingBehind: null, foldedInto: null, folded: null } : full;
  };
  return {
    runs: shown.map(view),
    nextCursor: found.length > page.limit ? (shown[shown.length - 1]?.run.scheduledFor ?? null) : null,
  };
}

/**
 * The run `correlationId` of (tenant, project) with its run log's text (null once the log
 * expired or was never written), as the REST contract's `RunDetail`; undefined when there is no
 * such run in that project (another project's run is indistinguishable from a missing one).
 *
 * @throws a store error.
 */
export async function runDetail(
  rt: Pick<Runtime, 'repos'>,
  tenant: string,
  project: string,
  correlationId: string,
): Promise<RunDetail | undefined> {
  const run = await rt.repos.runs.get(correlationId);
  if (run === undefined || run.tenant !== tenant || run.project !== project) return undefined;
  const log = await rt.repos.documents.get({ tenant, project, path: run.logPath });
  const process = run.processId === null ? undefined : await rt.repos.processes.get(run.processId);
  const folded =
    run.waitingBehind === null ? undefined : (await rt.repos.runs.folded([correlationId])).get(correlationId);
  return runDetailView(run, log?.body ?? null, process, folded);
}
