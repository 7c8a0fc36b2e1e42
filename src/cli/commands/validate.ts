import { readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import type { Command } from 'commander';
import { storeExists } from '../../app/compose.js';
import { isRefusal, UrsaError, type ValidationIssue } from '../../errors/index.js';
import { parseRecipeDocument } from '../../recipes/parse.js';
import type { RecipeDefinition } from '../../recipes/recipe.js';
import type { SchedulerDefinition } from '../../scheduler/definition.js';
import { parseSchedulerDocument } from '../../scheduler/document.js';
import {
  engineProblem,
  type ReferenceProblem,
  schedulerReferenceProblems,
} from '../../service/references.js';
import { formatInstant } from '../../time/instant.js';
import { commandConfig, openContext, withStoreOptions } from '../context.js';
import { type CliIo, ExitCode, printJson } from '../io.js';
import { scope } from './store-commands.js';

/**
 * What `ursa validate --json` prints (issue #23): the file, what it is, whether it is valid, what
 * it does (`summary`, null when invalid), the store its names were checked against (null when none
 * was: offline), and the refusal's code and every issue (field path and reason) when invalid.
 */
interface ValidateReport {
  readonly file: string;
  readonly kind: 'scheduler' | 'recipe';
  readonly valid: boolean;
  readonly summary: string | null;
  readonly store: string | null;
  readonly code: string | null;
  readonly issues: readonly ValidationIssue[];
}

type Parsed =
  | { kind: 'scheduler'; scheduler: SchedulerDefinition }
  | { kind: 'recipe'; recipe: RecipeDefinition };

function summaryOf(parsed: Parsed): string {
  if (parsed.kind === 'recipe') return `engine ${parsed.recipe.engine}`;
  const { trigger, zone } = parsed.scheduler;
  const when =
    trigger.kind === 'cron'
      ? `cron ${JSON.stringify(trigger.expression)}`
      : `at ${formatInstant(trigger.instant)}`;
  return `${when} in ${zone.id}`;
}

/** The store a validation checks names against: the configured one when it exists, else none. */
function storeToCheck(command: Command, io: CliIo): string | null {
  const { db } = commandConfig(command, io);
  return storeExists(db, io.cwd) ? db : null;
}

/** What the store does not know of what the document names (runAs, recipe, engine, workflow). */
async function referenceProblems(command: Command, io: CliIo, parsed: Parsed): Promise<ReferenceProblem[]> {
  const { config, rt, close } = await openContext(command, io);
  try {
    if (parsed.kind === 'recipe') {
      const engine = engineProblem(rt, parsed.recipe, 'engine');
      return engine === null ? [] : [engine];
    }
    const { tenant, project } = scope(command, config);
    return await schedulerReferenceProblems(rt, tenant, project, parsed.scheduler);
  } finally {
    await close();
  }
}

const OFFLINE = 'not checked against a store (none configured or found): its runAs user, recipe and engine';

/**
 * `ursa validate <file> [--json]`: checks a scheduler or recipe file; with a store (`--db`,
 * `URSA_DB`, `ursa.yaml`, or ./data/ursa.db when it exists) also what it names: its `runAs`
 * user, its recipe and that recipe's engine (a recipe file: its engine), each with "did you
 * mean" (issue #23). Without one it stays offline and says what it did not check. Exit 2 when
 * the file is not valid.
 */
export function registerValidate(program: Command, io: CliIo): void {
  withStoreOptions(program.command('validate'))
    .description(
      'check a scheduler or recipe YAML file (a path with /recipes/ is a recipe); with a store, also its runAs user, recipe and engine',
    )
    .argument('<file>', 'the YAML file; its name without .yaml is the scheduler or recipe name')
    .option('--json', 'print JSON {file, kind, valid, summary, store, code, issues: [{path, message}]}')
    .action(async (file: string, options: { json?: boolean }, command: Command) => {
      const path = resolve(io.cwd, file);
      let body: string;
      try {
        body = readFileSync(path, 'utf8');
      } catch {
        throw new UrsaError('ARGUMENT_INVALID', `file: cannot read ${JSON.stringify(file)}`, {
          field: 'file',
          value: file,
        });
      }
      const name = basename(path).replace(/\.ya?ml$/, '');
      const kind = /[/\\]recipes[/\\]/.test(path) ? 'recipe' : 'scheduler';
      const report = (fields: Partial<ValidateReport>): ValidateReport => ({
        file,
        kind,
        valid: false,
        summary: null,
        store: null,
        code: null,
        issues: [],
        ...fields,
      });
      let parsed: Parsed;
      try {
        parsed =
          kind === 'recipe'
            ? {
                kind,
                recipe: parseRecipeDocument(body, {
                  name,
                  path: file,
                  source: 'project',
                  secretHosts: commandConfig(command, io).secretHosts,
                  publicUrl: commandConfig(command, io).publicUrl || null,
                }),
              }
            : { kind, scheduler: parseSchedulerDocument(body, { name, path: file }) };
      } catch (error) {
        if (!options.json || !isRefusal(error)) throw error;
        const issues = error.issues ?? [{ path: error.field ?? '', message: error.message }];
        printJson(io, report({ code: error.code, issues }));
        throw new ExitCode(2);
      }
      const store = storeToCheck(command, io);
      const problems = store === null ? [] : await referenceProblems(command, io, parsed);
      const issues = problems.map(({ path: at, message }) => ({ path: at, message }));
      const valid = problems.length === 0;
      if (options.json) {
        printJson(
          io,
          report({
            valid,
            summary: valid ? summaryOf(parsed) : null,
            store,
            code: problems[0]?.code ?? null,
            issues,
          }),
        );
        if (!valid) throw new ExitCode(2);
        return;
      }
      const [first] = problems;
      if (first !== undefined) {
        throw new UrsaError(first.code, problems.map((p) => `${file}: ${p.path}: ${p.message}`).join('\n'), {
          field: first.path,
          value: first.value,
          issues,
        });
      }
      const checked = store === null ? `\n  ${OFFLINE}` : '';
      io.stdout.write(`${file}: a valid ${kind} (${summaryOf(parsed)})${checked}\n`);
    });
}
