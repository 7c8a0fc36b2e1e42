import { afterEach, describe, expect, it } from 'vitest';
import { deleteScheduler, setScheduler } from '../../src/service/schedulers.js';
import {
  type AgentWorld,
  agentWorld,
  FIRST_RUN,
  P,
  person,
  TARGET,
  TARGET_LOGS,
  targetDocument,
} from '../support/agent-world.js';
import { DIALECTS } from '../support/dialects.js';

// Spec §10b over time: a run is hidden from agents when its scheduler is hidden now, or was hidden
// when the run was claimed (the run keeps that lock mode: its run log's front matter and its feed
// lines say it). Deleting a hidden scheduler, making it full, or putting a project scheduler of
// its name over a hidden `_tenant` one shows none of the runs it had while hidden.

const NEXT_RUN = '2026-06-02T08:00:10.002Z';

let w: AgentWorld | undefined;
afterEach(async () => {
  await w?.t.close();
  w = undefined;
});

/** What the agent sees of the target's runs: every run-log path it lists, and its last run. */
async function seen(world: AgentWorld) {
  const listed = await world.call('document_list', {});
  const schedulers = await world.call('scheduler_list', {});
  const target = schedulers.ok
    ? (schedulers.output as { schedulers: { name: string; lastRun: unknown }[] }).schedulers.find(
        (s) => s.name === TARGET,
      )
    : undefined;
  return {
    // By path: which runs it sees, not in which order (document_list answers newest first).
    paths: listed.ok ? [...(listed.output as { paths: string[] }).paths].sort() : listed.error,
    lastRun: target === undefined ? 'not listed' : target.lastRun,
  };
}

async function readLog(world: AgentWorld, path: string) {
  return world.call('document_read', { path });
}

const notFound = (path: string) => ({
  ok: false,
  error: {
    code: 'NOT_FOUND',
    message: `no run log ${JSON.stringify(path)}; document_list shows the ones there are`,
  },
});

/** A document an agent may write (as its own user), and the answer to its write of a locked name. */
const agentDocument = targetDocument('full').replace(/runAs: .*\n/, 'runAs: mia\n');
const lockedAnswer = {
  ok: false,
  error: {
    code: 'LOCKED',
    message: `scheduler ${JSON.stringify(TARGET)} is locked: agents cannot change or delete it, and a project scheduler of the same name cannot override it. Choose another name, or ask a person to change it.`,
  },
};

describe.each(DIALECTS)(
  'runs an agent sees of a scheduler whose lock mode changed, on %s (issue #19)',
  (dialect) => {
    it('keeps the runs of a hidden time hidden after a person makes the scheduler full; later runs show', async () => {
      w = await agentWorld(dialect, 'project', 'hidden');
      await w.runAt(FIRST_RUN);
      const [hiddenLog] = (await w.logsOf(TARGET)) as [string];
      const [daily] = (await w.logsOf('daily')) as [string];
      await setScheduler(w.t.rt, person(P), TARGET, targetDocument('full'));
      expect(await seen(w)).toEqual({ paths: [daily], lastRun: null });
      expect(await readLog(w, hiddenLog)).toEqual(notFound(hiddenLog));

      await w.runAt(NEXT_RUN);
      const fullLog = (await w.logsOf(TARGET)).find((p) => p !== hiddenLog) as string;
      const dailyNext = (await w.logsOf('daily')).find((p) => p !== daily) as string;
      expect(await seen(w)).toEqual({
        paths: [fullLog, daily, dailyNext],
        lastRun: { at: NEXT_RUN, state: 'ended', outcome: 'completed' },
      });
      expect(await readLog(w, hiddenLog)).toEqual(notFound(hiddenLog));
      expect(await readLog(w, fullLog)).toMatchObject({ ok: true, output: { path: fullLog } });
    });

    it.each(['project', '_tenant'] as const)(
      'keeps the runs of a hidden %s scheduler hidden after a person deletes it',
      async (place) => {
        w = await agentWorld(dialect, place, 'hidden');
        await w.runAt(FIRST_RUN);
        const [hiddenLog] = (await w.logsOf(TARGET)) as [string];
        const [daily] = (await w.logsOf('daily')) as [string];
        await deleteScheduler(w.t.rt, person(place === 'project' ? P : '_tenant'), TARGET);
        expect(await seen(w)).toEqual({ paths: [daily], lastRun: 'not listed' });
        expect(await readLog(w, hiddenLog)).toEqual(notFound(hiddenLog));
        expect(await w.call('document_list', { prefix: `_vance/logs/scheduler/${TARGET}/` })).toEqual({
          ok: true,
          output: { paths: [], nextCursor: null, truncated: false },
        });
      },
    );

    it('hides the runs a scheduler had while full once a person makes it hidden', async () => {
      w = await agentWorld(dialect, 'project', 'full');
      await w.runAt(FIRST_RUN);
      const [fullLog] = (await w.logsOf(TARGET)) as [string];
      const [daily] = (await w.logsOf('daily')) as [string];
      expect(await seen(w)).toEqual({
        paths: [fullLog, daily],
        lastRun: { at: FIRST_RUN, state: 'ended', outcome: 'completed' },
      });
      await setScheduler(w.t.rt, person(P), TARGET, targetDocument('hidden'));
      expect(await seen(w)).toEqual({ paths: [daily], lastRun: 'not listed' });
      expect(await readLog(w, fullLog)).toEqual(notFound(fullLog));
    });

    it('shows a project scheduler a person put over a hidden _tenant one, but none of the tenant one’s runs', async () => {
      w = await agentWorld(dialect, '_tenant', 'hidden');
      await w.runAt(FIRST_RUN);
      const [tenantLog] = (await w.logsOf(TARGET)) as [string];
      const [daily] = (await w.logsOf('daily')) as [string];
      await setScheduler(w.t.rt, person(P), TARGET, targetDocument('full'));
      expect(await seen(w)).toEqual({ paths: [daily], lastRun: null });
      expect(await readLog(w, tenantLog)).toEqual(notFound(tenantLog));
    });

    // Issue #19: a name stays hidden after a person deletes it. The last document of the name in
    // each layer (the project, `_tenant`) counts, live or trashed, until a person writes a visible
    // one in that layer; an agent cannot, since creating a name last known hidden is LOCKED.
    it.each(['project', '_tenant'] as const)(
      'keeps the runs a %s scheduler had while full hidden after a person makes it hidden and deletes it, until a person makes the name visible again',
      async (place) => {
        w = await agentWorld(dialect, place, 'full');
        await w.runAt(FIRST_RUN);
        const [fullLog] = (await w.logsOf(TARGET)) as [string];
        const [daily] = (await w.logsOf('daily')) as [string];
        const layer = person(place === 'project' ? P : '_tenant');
        await setScheduler(w.t.rt, layer, TARGET, targetDocument('hidden'));
        await deleteScheduler(w.t.rt, layer, TARGET);
        expect(await seen(w)).toEqual({ paths: [daily], lastRun: 'not listed' });
        expect(await readLog(w, fullLog)).toEqual(notFound(fullLog));
        expect(await w.call('document_list', { prefix: TARGET_LOGS })).toEqual({
          ok: true,
          output: { paths: [], nextCursor: null, truncated: false },
        });
        expect(await w.call('scheduler_set', { name: TARGET, yaml: agentDocument })).toEqual(lockedAnswer);
        expect(await seen(w)).toEqual({ paths: [daily], lastRun: 'not listed' });

        await setScheduler(w.t.rt, layer, TARGET, targetDocument('full'));
        expect(await seen(w)).toEqual({
          paths: [fullLog, daily],
          lastRun: { at: FIRST_RUN, state: 'ended', outcome: 'completed' },
        });
        expect(await readLog(w, fullLog)).toMatchObject({ ok: true, output: { path: fullLog } });
      },
    );

    it('keeps the runs a _tenant scheduler had while full hidden while it is hidden, under a full project scheduler a person put over it, and after its deletion', async () => {
      w = await agentWorld(dialect, '_tenant', 'full');
      await w.runAt(FIRST_RUN);
      const [tenantLog] = (await w.logsOf(TARGET)) as [string];
      const [daily] = (await w.logsOf('daily')) as [string];
      await setScheduler(w.t.rt, person('_tenant'), TARGET, targetDocument('hidden'));
      await setScheduler(w.t.rt, person(P), TARGET, targetDocument('full'));
      expect(await seen(w)).toEqual({ paths: [daily], lastRun: null });
      expect(await readLog(w, tenantLog)).toEqual(notFound(tenantLog));
      await deleteScheduler(w.t.rt, person('_tenant'), TARGET);
      expect(await seen(w)).toEqual({ paths: [daily], lastRun: null });
      expect(await readLog(w, tenantLog)).toEqual(notFound(tenantLog));
    });

    it('keeps the runs a project scheduler had while full hidden after a person makes it hidden and deletes it from over a full _tenant one', async () => {
      w = await agentWorld(dialect, 'project', 'full');
      await w.runAt(FIRST_RUN);
      const [projectLog] = (await w.logsOf(TARGET)) as [string];
      const [daily] = (await w.logsOf('daily')) as [string];
      await setScheduler(w.t.rt, person('_tenant'), TARGET, targetDocument('full'));
      await setScheduler(w.t.rt, person(P), TARGET, targetDocument('hidden'));
      await deleteScheduler(w.t.rt, person(P), TARGET);
      expect(await seen(w)).toEqual({ paths: [daily], lastRun: null });
      expect(await readLog(w, projectLog)).toEqual(notFound(projectLog));
      expect(await w.call('scheduler_set', { name: TARGET, yaml: agentDocument })).toEqual(lockedAnswer);
    });
  },
);
