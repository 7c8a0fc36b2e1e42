import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { LOCAL_DEFAULT_USER } from '../../client/local.js';
import { UrsaError } from '../../errors/index.js';
import { WorkflowRunner } from '../../runtime/workflow-runner.js';
import type { Caller } from '../../service/caller.js';
import type { WorkflowRun } from '../../service/records.js';
import { documentSummaryView, documentView, workflowRunView } from '../../service/views.js';
import * as workflows from '../../service/workflows.js';
import { openContext, withStoreOptions } from '../context.js';
import { type CliIo, ExitCode, printJson } from '../io.js';
import { scope } from './store-commands.js';

/** `--param k=v`, repeatable: collected into a mapping (values are text). */
function collectParam(text: string, into: Record<string, string>): Record<string, string> {
  const at = text.indexOf('=');
  if (at < 1)
    throw new UrsaError('ARGUMENT_INVALID', `--param ${text}: expected name=value`, {
      field: 'param',
      value: text,
    });
  return { ...into, [text.slice(0, at)]: text.slice(at + 1) };
}

function printRun(io: CliIo, run: WorkflowRun): void {
  io.stdout.write(
    `workflow run ${run.id} (${run.workflow}): ${run.status}${run.reason ? ` — ${run.reason}` : ''}\n`,
  );
  for (const step of run.steps) {
    io.stdout.write(
      `  ${step.name} (${step.recipe}): ${step.status}${step.reason ? ` — ${step.reason}` : ''}\n`,
    );
    const output = step.output?.trimEnd();
    if (output) io.stdout.write(`${output.replace(/^/gm, '    | ')}\n`);
  }
}

/** Runs `action` with the local store and a caller of the command's tenant and project. */
function local(
  io: CliIo,
  action: (
    ctx: Awaited<ReturnType<typeof openContext>>,
    caller: Caller,
    options: Record<string, unknown>,
  ) => Promise<void>,
) {
  return async (...args: unknown[]) => {
    const command = args[args.length - 1] as Command;
    const ctx = await openContext(command, io);
    try {
      const opts = command.optsWithGlobals<{ as?: string }>();
      const caller: Caller = {
        ...scope(command, ctx.config),
        user: opts.as ?? LOCAL_DEFAULT_USER,
        role: 'admin',
        interface: 'cli',
      };
      await action(ctx, caller, {
        ...(args[args.length - 2] as Record<string, unknown>),
        args: args.slice(0, -2),
      });
    } finally {
      await ctx.close();
    }
  };
}

/**
 * `ursa workflow list|get|set|run|status|stop` (issue #10), on the local store: workflow
 * documents, and runs. `run` runs the workflow here, in the foreground, and prints its steps;
 * its exit status is 0 only when the run completed.
 */
export function registerWorkflowCommands(program: Command, io: CliIo): void {
  const workflow = program.command('workflow').description('workflow documents and runs');
  withStoreOptions(workflow.command('list'))
    .description('list the workflow documents of the project')
    .option(
      '--json',
      'print JSON {workflows: [{path, version, createdBy, updatedAt, expiresAt}]}, as REST does',
    )
    .action(
      local(io, async ({ rt }, caller, { json }) => {
        const docs = await workflows.listWorkflows(rt, caller);
        if (json) return printJson(io, { workflows: docs.map(documentSummaryView) });
        for (const doc of docs) io.stdout.write(`${doc.path}  v${doc.version}\n`);
      }),
    );
  withStoreOptions(workflow.command('get'))
    .description('print a workflow document')
    .argument('<name>', 'workflow name')
    .option('--json', 'print JSON {path, version, body, …}, the document as REST gives it')
    .action(
      local(io, async ({ rt }, caller, { args, json }) => {
        const doc = await workflows.getWorkflow(rt, caller, (args as string[])[0] as string);
        if (json) return printJson(io, documentView(doc));
        io.stdout.write(doc.body);
      }),
    );
  withStoreOptions(workflow.command('set'))
    .description('create or replace a workflow from a YAML file (validated first; a refusal changes nothing)')
    .argument('<name>', 'workflow name')
    .argument('<file>', 'YAML file')
    .option('--as <user>', 'the user writing it', LOCAL_DEFAULT_USER)
    .action(
      local(io, async ({ rt }, caller, { args }) => {
        const [name, file] = args as [string, string];
        const result = await workflows.setWorkflow(
          rt,
          caller,
          name,
          readFileSync(resolve(io.cwd, file), 'utf8'),
        );
        io.stdout.write(`${result.created ? 'created' : 'updated'} ${result.path} (v${result.version})\n`);
      }),
    );
  withStoreOptions(workflow.command('run'))
    .description('run a workflow here, in the foreground, and print its steps')
    .argument('<name>', 'workflow name')
    .option('--param <name=value>', 'a workflow parameter (repeatable)', collectParam, {})
    .option('--as <user>', 'the user it runs as', LOCAL_DEFAULT_USER)
    .action(
      local(io, async ({ rt }, caller, { args, param }) => {
        const runner = new WorkflowRunner(rt);
        const started = await workflows.startWorkflow(
          runner,
          caller,
          (args as string[])[0] as string,
          param as Record<string, string>,
        );
        io.stdout.write(`started workflow run ${started.run.id}\n`);
        const stop = () => runner.stopLocal(started.run.id, 'interrupted');
        process.once('SIGINT', stop);
        const { status } = await started.done.finally(() => process.off('SIGINT', stop));
        printRun(io, await workflows.getWorkflowRun(rt, caller, started.run.id));
        if (status !== 'completed') throw new ExitCode(1);
      }),
    );
  withStoreOptions(workflow.command('status'))
    .description('print a workflow run with its steps')
    .argument('<runId>', 'workflow run id (8 hex digits)')
    .option('--json', 'print JSON {workflowRunId, workflow, status, steps: […], …}, the run as REST gives it')
    .action(
      local(io, async ({ rt }, caller, { args, json }) => {
        const run = await workflows.getWorkflowRun(rt, caller, (args as string[])[0] as string);
        if (json) return printJson(io, workflowRunView(run));
        printRun(io, run);
      }),
    );
  withStoreOptions(workflow.command('stop'))
    .description('stop a workflow run on whichever worker runs it')
    .argument('<runId>', 'workflow run id (8 hex digits)')
    .action(
      local(io, async ({ rt }, caller, { args }) => {
        const id = (args as string[])[0] as string;
        io.stdout.write(
          (await workflows.stopWorkflowRun(rt, caller, id))
            ? `stopping ${id}\n`
            : `${id} has ended: nothing to stop\n`,
        );
      }),
    );
}
