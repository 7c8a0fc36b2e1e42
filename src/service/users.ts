import type { MeView } from '../contract/index.js';
import { UrsaError } from '../errors/index.js';
import type { Runtime } from '../runtime/context.js';
import { resolveDisplayTimezone } from '../store/setting-cascades.js';
import type { Caller } from './caller.js';

/**
 * The users of a tenant (decisions §2): adding one, listing them with the display time zone that
 * applies to each, and making sure one exists before it acts.
 */

/** A user of a tenant as `ursa user list` shows it. */
export interface UserRow {
  readonly name: string;
  /** The zone stored on the user's profile (IANA id), null when none. */
  readonly displayTimezone: string | null;
  /** The zone that applies through the cascade (user setting → profile → tenant → UTC). */
  readonly effectiveTimezone: string;
  /** Where {@link effectiveTimezone} came from, e.g. `default`, `setting user/alice`. */
  readonly from: string;
}

/**
 * Adds the user `name` to `tenant` at the runtime's now, with `zone` (a canonical IANA id, or null)
 * as the display time zone of its profile. The name is not checked here.
 *
 * @throws UrsaError `CONFLICT` when the tenant already has that user.
 */
export async function addUser(
  rt: Pick<Runtime, 'repos' | 'clock'>,
  tenant: string,
  name: string,
  zone: string | null,
): Promise<void> {
  if ((await rt.repos.users.get(tenant, name)) !== undefined) {
    throw new UrsaError('CONFLICT', `name: user ${JSON.stringify(name)} already exists in ${tenant}`, {
      field: 'name',
      value: name,
      allowed: `a new user name (change a zone with: ursa settings set user ${name} display.timezone <zone>)`,
    });
  }
  await rt.repos.users.ensure(tenant, name, rt.clock.now(), zone);
}

/** The users of `tenant`, by name, each with the display time zone that applies and its source. */
export async function listUsers(rt: Pick<Runtime, 'repos'>, tenant: string): Promise<UserRow[]> {
  const rows: UserRow[] = [];
  for (const u of await rt.repos.users.list(tenant)) {
    const effective = await resolveDisplayTimezone(rt.repos, tenant, u.name);
    rows.push({
      name: u.name,
      displayTimezone: u.displayTimezone,
      effectiveTimezone: effective.value,
      from: effective.from,
    });
  }
  return rows;
}

/** Adds the user `name` to `tenant` at the runtime's now unless it exists (no zone); never throws a refusal. */
export async function ensureUser(
  rt: Pick<Runtime, 'repos' | 'clock'>,
  tenant: string,
  name: string,
): Promise<void> {
  await rt.repos.users.ensure(tenant, name, rt.clock.now());
}

/**
 * Who `caller` is in its project and the display zone that applies to its user, with the level it
 * came from (`GET …/me`, issue #23: the editor shows times in the user's zone).
 *
 * @throws a store error.
 */
export async function whoAmI(rt: Pick<Runtime, 'repos'>, caller: Caller): Promise<MeView> {
  return {
    tenant: caller.tenant,
    project: caller.project,
    user: caller.user,
    role: caller.role,
    displayTimezone: await resolveDisplayTimezone(rt.repos, caller.tenant, caller.user),
  };
}
