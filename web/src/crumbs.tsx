import type { Scope } from './api.js';
import { routeHash } from './route.js';

/** The breadcrumb of a view under a scheduler (a run, a process, a session): project / scheduler / here. */
export function Crumbs({ scope, scheduler, here }: { scope: Scope; scheduler: string; here: string }) {
  return (
    <nav class="crumbs" aria-label="Breadcrumb">
      <a href={routeHash({ view: 'list', ...scope })}>
        {scope.tenant}/{scope.project}
      </a>{' '}
      / <a href={routeHash({ view: 'edit', ...scope, name: scheduler })}>{scheduler}</a> /{' '}
      <span aria-current="page">{here}</span>
    </nav>
  );
}
