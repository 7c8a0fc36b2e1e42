import { InfrastructureError } from '../errors/index.js';
import type { Runtime } from '../runtime/context.js';
import type { StoreDialect } from '../store/open.js';

/**
 * What an interface may know of the store it opened: which it is, whether it holds any document,
 * and whether it answers.
 */

/** The store's dialect (`sqlite` or `postgres`) and where it is (a file path, or a URL without its password). */
export function storeIdentity(rt: Pick<Runtime, 'repos'>): { dialect: StoreDialect; location: string } {
  const { dialect, location } = rt.repos.store;
  return { dialect, location };
}

/** How many documents the store holds, of every tenant and project (trashed ones included). */
export async function documentCount(rt: Pick<Runtime, 'repos'>): Promise<number> {
  const count = await rt.repos.store.db
    .selectFrom('documents')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirst();
  return Number(count?.n ?? 0);
}

/**
 * Reads one row of the schedule state, to tell that the store answers (`/readyz`).
 *
 * @throws InfrastructureError `STORE_UNAVAILABLE` ("the store does not answer", with the
 *   store's error as its cause) when the read fails.
 */
export async function checkStoreAnswers(rt: Pick<Runtime, 'repos'>): Promise<void> {
  try {
    await rt.repos.store.db.selectFrom('schedule_state').select('name').limit(1).execute();
  } catch (error) {
    throw new InfrastructureError('STORE_UNAVAILABLE', 'the store does not answer', { cause: error });
  }
}
