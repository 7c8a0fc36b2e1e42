import { type Route, routeHash } from './route.js';

/** Goes to `route` (the hash changes, and the page follows it). */
export function navigate(route: Route): void {
  const hash = routeHash(route);
  if (window.location.hash !== hash) window.location.hash = hash;
}
