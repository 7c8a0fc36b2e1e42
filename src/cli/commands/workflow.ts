import type { Command } from 'commander';
import { HttpClient } from '../../client/http.js';
import { LOCAL_DEFAULT_USER } from '../../client/local.js';
import type { WorkflowRunView } from '../../client/types.js';
import { UrsaError } from '../../errors/index.js';
import { WorkflowRunner } from '../../runtime/workflow-runner.js';
import type { Caller } from '../../service/caller.js';
import { workflowRunView } from '../../service/views.js';
import * as workflows from '../../service/workflows.js';
import { openClient, openContext, remoteTarget, withClient, withClientOptions } from '../context.js';
import { type CliIo, ExitCode, printJson } from '../io.js';
import { readYamlInput } from '../yaml-input.js';
import { scope } from './store-commands.js';

/** How often `workflow run --url` asks the server how its run is going. */
const POLL_MS = 1000;

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

function printRun(io: CliIo, run: WorkflowRunView): void {
  io.stdout.write(
    `workflow run ${run.workflowRunId} (${run.workflow}): ${run.status}${run.reason ? ` — ${run.reason}` : ''}\n`,
  );
  for (const step of run.steps) {
    io.stdout.write(
      `  ${step.name} (${step.recipe}): ${step.status}${step.reason ? ` — ${step.reason}` : ''}\n`,
    );
    const output = step.output?.trimEnd();
    if (output) io.stdout.write(`${output.replace(/^/gm, '    | ')}\n`);
  }
}

/** Runs `use` until SIGINT, which calls `interrupt` once; the handler is removed when `use` settles. */
async function interruptible<T>(use: () => Promise<T>, interrupt: () => unknown): Promise<T> {
  process.once('SIGINT', interrupt);
  try {
    return await use();
  } finally {
    process.off('SIGINT', interrupt);
  }
}

/**
 * `ursa workflow run` against a server: the run starts there, in the background; the command
 * follows it until it ends (Ctrl-C asks the server to stop it), unless `--detach`.
 */
async function runRemote(
  command: Command,
  io: CliIo,
  name: string,
  params: Record<string, string>,
  detach: boolean,
): Promise<void> {
  const client = await openClient(command, io);
  try {
    if (!(client instanceof HttpClient)) throw new Error('a server client was expected');
    const started = await client.startWorkflow(name, params);
    const id = started.workflowRunId;
    io.stdout.write(`started workflow run ${id}\n`);
    if (detach) return;
    const run = await interruptible(
      async () => {
        let run = started;
        while (run.status === 'running') {
          await new Promise((resolve) => setTimeout(resolve, POLL_MS));
          run = await client.workflowRun(id);
        }
        return run;
      },
      () => void client.stopWorkflowRun(id).catch(() => undefined),
    );
    printRun(io, run);
    if (run.status !== 'completed') throw new ExitCode(1);
  } finally {
    await client.close();
  }
}

/** `ursa workflow run` on a store: the run runs here, in the foreground (Ctrl-C stops it). */
async function runHere(
  command: Command,
  io: CliIo,
  name: string,
  params: Record<string, string>,
  as: string,
): Promise<void> {
  const ctx = await openContext(command, io);
  try {
    const caller: Caller = { ...scope(command, ctx.config), user: as, role: 'admin', interface: 'cli' };
    const runner = new WorkflowRunner(ctx.rt);
    const started = await workflows.startWorkflow(runner, caller, name, params);
    io.stdout.write(`started workflow run ${started.run.id}\n`);
    const { status } = await interruptible(
      () => started.done,
      () => runner.stopLocal(started.run.id, 'interrupted'),
    );
    printRun(io, workflowRunView(await workflows.getWorkflowRun(ctx.rt, caller, started.run.id)));
    if (status !== 'completed') throw new ExitCode(1);
  } finally {
    await ctx.close();
  }
}

/**
 * `ursa workflow list|get|set|run|status|stop` (issues #10 and #23): workflow documents and runs,
 * on a store or against a server (`--url`), as the REST API has them. `run` on a store runs the
 * workflow here, in the foreground; against a server it runs there and the command follows it. Its
 * exit status is 0 only when the run completed.
 */
export function registerWorkflowCommands(program: Command, io: CliIo): void {
  const workflow = program.command('workflow').description('workflow documents and runs');
  withClientOptions(workflow.command('list'))
    .description('list the workflow documents of the project')
    .option(
      '--json',
      'print JSON {workflows: [{path, version, createdBy, updatedAt, expiresAt}]}, as REST does',
    )
    .action((options: { json?: boolean }, command: Command) =>
      withClient(command, io, async (client) => {
        const list = await client.listWorkflows();
        if (options.json) return printJson(io, list);
        for (const doc of list.workflows) io.stdout.write(`${doc.path}  v${doc.version}\n`);
      }),
    );
  withClientOptions(workflow.command('get'))
    .description('print a workflow document')
    .argument('<name>', 'workflow name')
    .option('--json', 'print JSON {path, version, body, …}, the document as REST gives it')
    .action((name: string, options: { json?: boolean }, command: Command) =>
      withClient(command, io, async (client) => {
        const doc = await client.getWorkflow(name);
        if (options.json) return printJson(io, doc);
        io.stdout.write(doc.body);
      }),
    );
  withClientOptions(workflow.command('set'))
    .description('create or replace a workflow from a YAML file (validated first; a refusal changes nothing)')
    .argument('<name>', 'workflow name')
    .argument('<file>', 'YAML file; - reads it from standard input')
    .option('--as <user>', 'the user writing it; default admin; not with --url')
    .action(async (name: string, file: string, options: { as?: string }, command: Command) => {
      const yaml = await readYamlInput(io, file);
      await withClient(
        command,
        io,
        async (client) => {
          const result = await client.setWorkflow(name, yaml);
          io.stdout.write(`${result.created ? 'created' : 'updated'} ${result.path} (v${result.version})\n`);
        },
        { as: options.as },
      );
    });
  withClientOptions(workflow.command('run'))
    .description(
      'run a workflow and print its steps: on a store here, in the foreground; with --url on the server, followed until it ends',
    )
    .argument('<name>', 'workflow name')
    .option('--param <name=value>', 'a workflow parameter (repeatable)', collectParam, {})
    .option('--as <user>', 'the user it runs as; default admin; not with --url')
    .option('--detach', 'with --url: print the run id and return while the run goes on')
    .action(
      async (
        name: string,
        options: { param: Record<string, string>; as?: string; detach?: boolean },
        command: Command,
      ) => {
        if (remoteTarget(command, io) === undefined) {
          if (options.detach) {
            throw new UrsaError(
              'ARGUMENT_INVALID',
              'detach: --detach needs --url: a run on a store runs here',
              {
                field: 'detach',
                allowed: '--detach with --url <server>',
              },
            );
          }
          return runHere(command, io, name, options.param, options.as ?? LOCAL_DEFAULT_USER);
        }
        if (options.as !== undefined) {
          throw new UrsaError(
            'ARGUMENT_INVALID',
            'as: --as names the user of a local store; against a server the token says who acts',
            {
              field: 'as',
              value: options.as,
              allowed: 'a token of that user (ursa token create --user <user>)',
            },
          );
        }
        return runRemote(command, io, name, options.param, options.detach === true);
      },
    );
  withClientOptions(workflow.command('status'))
    .description('print a workflow run with its steps')
    .argument('<runId>', 'workflow run id (8 hex digits)')
    .option('--json', 'print JSON {workflowRunId, workflow, status, steps: […], …}, the run as REST gives it')
    .action((id: string, options: { json?: boolean }, command: Command) =>
      withClient(command, io, async (client) => {
        const run = await client.workflowRun(id);
        if (options.json) return printJson(io, run);
        printRun(io, run);
      }),
    );
  withClientOptions(workflow.command('stop'))
    .description('stop a workflow run on whichever worker runs it')
    .argument('<runId>', 'workflow run id (8 hex digits)')
    .action((id: string, _options: unknown, command: Command) =>
      withClient(command, io, async (client) => {
        const { stopping } = await client.stopWorkflowRun(id);
        io.stdout.write(stopping ? `stopping ${id}\n` : `${id} has ended: nothing to stop\n`);
      }),
    );
}
