import type { Kysely } from 'kysely';
import type { DocumentKey } from './keys.js';
import type { Store } from './open.js';
import type { Database } from './schema.js';

/**
 * The note of a paused scheduler (issue #22): why, who paused it, and when (UTC epoch ms). The
 * pause itself is its document's `enabled: false`; the note is written only by a pause, with the
 * document (`PutOptions.pause`), never from the document's text.
 */
export interface PauseNote {
  readonly note: string;
  readonly by: string;
  readonly at: number;
}

/**
 * Writes (a note) or clears (null) the pause note of the document `key`, inside the transaction of
 * the document's write, so that the two never disagree. Returns whether a note was written or
 * one was cleared (false: there was none to clear).
 */
export async function writePause(
  trx: Kysely<Database>,
  key: DocumentKey,
  pause: PauseNote | null,
): Promise<boolean> {
  if (pause === null) {
    const deleted = await trx
      .deleteFrom('scheduler_pauses')
      .where('tenant', '=', key.tenant)
      .where('project', '=', key.project)
      .where('path', '=', key.path)
      .executeTakeFirst();
    return Number(deleted.numDeletedRows) > 0;
  }
  const values = { note: pause.note, paused_by: pause.by, paused_at: pause.at };
  await trx
    .insertInto('scheduler_pauses')
    .values({ ...key, ...values })
    .onConflict((oc) => oc.columns(['tenant', 'project', 'path']).doUpdateSet(values))
    .execute();
  return true;
}

/** The pause notes of scheduler documents (issue #22); see {@link PauseNote}. */
export class Pauses {
  constructor(private readonly store: Store) {}

  /**
   * The pause notes of the documents of `projects` of `tenant` (a project's list reads its own
   * and `_tenant`'s), by document path within each project: `${project}\u0000${path}`.
   */
  async ofProjects(tenant: string, projects: readonly string[]): Promise<Map<string, PauseNote>> {
    if (projects.length === 0) return new Map();
    const rows = await this.store.db
      .selectFrom('scheduler_pauses')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('project', 'in', projects)
      .execute();
    return new Map(
      rows.map((r) => [
        pauseKey(r.project, r.path),
        { note: r.note, by: r.paused_by, at: Number(r.paused_at) },
      ]),
    );
  }

  /** The pause note of the document `key`, if it has one. */
  async get(key: DocumentKey): Promise<PauseNote | undefined> {
    const notes = await this.ofProjects(key.tenant, [key.project]);
    return notes.get(pauseKey(key.project, key.path));
  }
}

/** The key of a document's note in {@link Pauses.ofProjects}'s map. */
export function pauseKey(project: string, path: string): string {
  return `${project}\u0000${path}`;
}
