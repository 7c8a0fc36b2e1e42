import type { Kysely, Migration, MigrationProvider } from 'kysely';
import type { StoreDialect } from '../open.js';
import * as initial from './0001-initial.js';
import * as workers from './0002-workers.js';
import * as runSemantics from './0003-run-semantics.js';
import * as lifecycle from './0004-lifecycle.js';
import * as tokens from './0005-tokens.js';
import * as indexes from './0006-indexes.js';
import * as workflows from './0007-workflows.js';
import * as runLockMode from './0008-run-lock-mode.js';
import * as tokenScope from './0009-token-scope.js';
import * as documentAudit from './0010-document-audit.js';
import * as storeOwner from './0011-store-owner.js';
import * as processGroups from './0012-process-groups.js';
import * as runFencing from './0013-run-fencing.js';
import * as tenantOneShots from './0014-tenant-one-shots.js';
import * as stepProcessIndex from './0015-step-process-index.js';
import * as schedulerPauses from './0016-scheduler-pauses.js';
import * as runsStartedIndex from './0017-runs-started-index.js';
import * as runAttempts from './0018-run-attempts.js';
import * as runWaits from './0019-run-waits.js';
import * as feedProjectIndex from './0020-feed-project-index.js';
import * as storeIdentity from './0021-store-identity.js';
import * as agentRuns from './0022-agent-runs.js';
import * as runsActiveIndex from './0023-runs-active-index.js';
import * as scheduleSlots from './0024-schedule-slots.js';
import * as schedulerFencing from './0025-scheduler-fencing.js';
import * as activeRunIndexes from './0026-active-run-indexes.js';

interface DialectMigration {
  up(db: Kysely<unknown>, dialect: StoreDialect): Promise<void>;
  down?(db: Kysely<unknown>, dialect: StoreDialect): Promise<void>;
}

const ALL: Record<string, DialectMigration> = {
  '0001-initial': initial,
  '0002-workers': workers,
  '0003-run-semantics': runSemantics,
  '0004-lifecycle': lifecycle,
  '0005-tokens': tokens,
  '0006-indexes': indexes,
  '0007-workflows': workflows,
  '0008-run-lock-mode': runLockMode,
  '0009-token-scope': tokenScope,
  '0010-document-audit': documentAudit,
  '0011-store-owner': storeOwner,
  '0012-process-groups': processGroups,
  '0013-run-fencing': runFencing,
  '0014-tenant-one-shots': tenantOneShots,
  '0015-step-process-index': stepProcessIndex,
  '0016-scheduler-pauses': schedulerPauses,
  '0017-runs-started-index': runsStartedIndex,
  '0018-run-attempts': runAttempts,
  '0019-run-waits': runWaits,
  '0020-feed-project-index': feedProjectIndex,
  '0021-store-identity': storeIdentity,
  '0022-agent-runs': agentRuns,
  '0023-runs-active-index': runsActiveIndex,
  '0024-schedule-slots': scheduleSlots,
  '0025-scheduler-fencing': schedulerFencing,
  '0026-active-run-indexes': activeRunIndexes,
};

/** Every migration's name, in the order they apply. */
export const MIGRATION_NAMES: readonly string[] = Object.keys(ALL);

/**
 * Versioned migrations for one dialect, in code so the built package needs no migration folder.
 * Names sort in the order they apply; a released migration is never edited, only followed.
 * Each migration means the same on every dialect; only column types differ where they must.
 */
export function migrationsFor(dialect: StoreDialect): MigrationProvider {
  return {
    async getMigrations(): Promise<Record<string, Migration>> {
      return Object.fromEntries(
        Object.entries(ALL).map(([name, m]) => [
          name,
          {
            up: (db: Kysely<unknown>) => m.up(db, dialect),
            ...(m.down === undefined
              ? {}
              : { down: (db: Kysely<unknown>) => (m.down as NonNullable<typeof m.down>)(db, dialect) }),
          },
        ]),
      );
    },
  };
}
