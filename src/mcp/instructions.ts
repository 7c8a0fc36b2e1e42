/**
 * What the MCP server tells an agent at `initialize` (its `instructions`, issue #23): where to
 * start, the cron dialect with an example, and the lock modes (src/tools/lock-gate.ts) as an
 * agent meets them. The tools describe themselves; this is the map between them.
 * `recipe_list` and `recipe_get` are named for the recipes: a scheduler must name one.
 */
export const MCP_INSTRUCTIONS = [
  'Ursa runs agent work on a schedule. Each scheduler is a YAML document of this project; each fire starts a process from a recipe.',
  'Start with scheduler_list (name, cron or at, time zone, next and last run; locked ones are marked) and scheduler_get for one document. Before writing one, find what it can run with recipe_list, and read a recipe with recipe_get: a scheduler names one in its recipe: field.',
  'Write with scheduler_set: description, cron or at, timezone (IANA, e.g. Europe/Berlin), recipe, and optional params. cron has 6 fields, seconds first: second minute hour day-of-month month day-of-week, e.g. "0 30 9 * * MON-FRI" is 09:30 on weekdays; a 5-field Unix cron is refused (put 0 in front of it). at: is an ISO-8601 date-time for a one-shot that runs once.',
  "Lock modes (a scheduler's lockMode): full, you may read and change it; protected, you may read it and its runs but not change or delete it (nor put a document of the same name over it); hidden, you do not see it or its runs at all.",
  'With the admin tools, scheduler_fire runs one now as written (no params) and returns a logPath: read the run log with document_read; its outcome stays "pending" until the run ends. A refused call says what to change.',
].join('\n\n');
