import type { EngineResult } from '../engines/engine.js';
import { engineOutcome } from '../runs/outcomes.js';
import type { FencedRun } from '../runs/run.js';
import { endRun } from '../runs/transitions.js';
import type { Run } from '../store/runs.js';
import type { Runtime } from './context.js';
import { inlineLiteral } from './markdown-literal.js';
import { RunRecorder } from './recorder.js';
import { RunEnds } from './run-ends.js';
import type { RunLogNote } from './run-log.js';
import { schedulerOfRun } from './run-scheduler.js';

/** How an agent service ended its run (issue #25): what its `complete` callback said. */
export interface AgentEnd {
  /** `done` → completed, `failed` → failed, `stopped` → cancelled (as an engine's result). */
  readonly status: 'done' | 'failed' | 'stopped';
  /** Why it failed or stopped; null for `done`. */
  readonly reason: string | null;
}

/**
 * Ends an agent run its service said is over (issue #25), on whichever server heard the callback:
 * the same end as every run's (`RunEnds`, one transaction: the run, its process with the output
 * its service sent, its END line and final run log; a compare-and-swap on the run's state, worker
 * and fencing token, so a run that ended or moved on meanwhile is left as it is). Then its metric,
 * its log line, the inbox item of a failed run (spec §12), and `promote` (a worker in this
 * process gives the lane to the run waiting behind it; without one, the next reap of any worker
 * does).
 *
 * @returns whether this call ended it.
 */
export async function endAgentRun(
  rt: Runtime,
  run: Run,
  end: AgentEnd,
  promote?: (run: Run) => Promise<unknown>,
): Promise<boolean> {
  if (run.state !== 'started' || run.processId === null || run.fencingToken === null) return false;
  const started = run as FencedRun<string>;
  const at = rt.clock.now();
  // The document may be gone or broken by now: the end stands, its run log without the scheduler.
  const scheduler = await schedulerOfRun(rt.repos, run).catch(() => undefined);
  const process = await rt.repos.processes.get(started.processId);
  const recorder = new RunRecorder(rt);
  const ended = endRun(started, engineOutcome(end.status), end.reason, at);
  const result: EngineResult = {
    status: end.status,
    ...(end.reason === null ? {} : { reason: end.reason }),
    ...(process?.outputTail == null ? {} : { output: process.outputTail }),
  };
  const agentEvents = await agentEventsOf(rt, run);
  const written = await new RunEnds(rt, recorder).add({ run: ended, scheduler, result, agentEvents });
  if (!written) return false;
  rt.metrics?.runs.inc({ outcome: ended.outcome, trigger: ended.trigger });
  rt.log.info(
    {
      scheduler: ended.name,
      correlationId: ended.correlationId,
      processId: started.processId,
      outcome: ended.outcome,
      reason: ended.reason,
    },
    'run ended',
  );
  if (ended.outcome === 'failed') await recorder.notifyFailed(ended, at);
  await promote?.(ended);
  return true;
}

/** Lines of the feed an agent run's timeline shows at most. */
const EVENTS_SHOWN = 200;

/**
 * An agent run's reports as its run log's timeline shows them (issue #25), oldest first: its
 * status changes, questions, answers with who gave them, and their delivery, from its `AGENT` feed
 * lines. Text a service or a user wrote goes in as literal text.
 */
export async function agentEventsOf(rt: Pick<Runtime, 'repos'>, run: Run): Promise<RunLogNote[]> {
  const lines = await rt.repos.feed.list(
    run.tenant,
    run.project,
    { traceId: run.correlationId, kinds: ['AGENT'] },
    EVENTS_SHOWN,
  );
  return lines.reverse().flatMap((line) => {
    const p = line.payload;
    const text = (value: unknown) => inlineLiteral(String(value));
    switch (p.callback) {
      case 'status':
        return [
          {
            at: line.at,
            text:
              `status=${text(p.status)}` +
              (p.question === undefined ? '' : ` question=${text(p.question)}`) +
              (p.message === undefined ? '' : ` message=${text(p.message)}`),
          },
        ];
      case 'adopted':
        return [
          {
            at: line.at,
            text: `adopted by worker ${text(p.workerId)}, its worker ${text(p.fromWorker)} lost: attempt ${text(p.attempt)}, fencing token ${text(p.fencingToken)}`,
          },
        ];
      case 'answer':
        return [{ at: line.at, text: `answered by ${text(p.answeredBy)} (inbox item ${text(p.inboxId)})` }];
      case 'answer-delivered':
        return [
          { at: line.at, text: `answer delivered to the agent service (inbox item ${text(p.inboxId)})` },
        ];
      default:
        return [];
    }
  });
}
