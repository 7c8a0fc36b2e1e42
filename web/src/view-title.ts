import type { Route } from './route.js';

/**
 * The document title of a view ("heartbeat — Ursa"); `undefined` is the sign-in page. Screen
 * readers say it when the view changes, and it names the tab and its history entries.
 */
export function viewTitle(route: Route | undefined): string {
  const what = ((): string => {
    if (route === undefined) return 'Sign in';
    switch (route.view) {
      case 'list':
        return `Schedulers of ${route.tenant}/${route.project}`;
      case 'new':
        return 'New scheduler';
      case 'edit':
        return route.name;
      case 'run':
        return `Run ${route.id} of ${route.name}`;
      case 'process':
        return `Process ${route.id} of ${route.name}`;
      case 'session':
        return `Session ${route.id} of ${route.name}`;
      case 'inbox':
        return `Inbox (${route.tenant})`;
      case 'trash':
        return `Trash of ${route.tenant}/${route.project}`;
      case 'recipe':
        return `Recipe ${route.name}`;
    }
  })();
  return `${what} — Ursa`;
}
