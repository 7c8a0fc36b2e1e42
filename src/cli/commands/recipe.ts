import type { Command } from 'commander';
import type { RecipeList } from '../../client/types.js';
import { withClient, withClientOptions } from '../context.js';
import type { CliIo } from '../io.js';
import { table } from '../table.js';
import { readYamlInput } from '../yaml-input.js';

/** `ursa recipe list`: one line per recipe the project can name, with a header. */
function listLines(list: RecipeList): string[] {
  return table([
    ['NAME', 'ENGINE', 'SOURCE', 'DESCRIPTION'],
    ...list.recipes.map((r) => [r.name, r.engine, r.source, r.description]),
  ]);
}

const printJson = (io: CliIo, value: unknown) => io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

/**
 * `ursa recipe list|get|set|delete` (issue #23): the recipes a project can name (its own,
 * `_tenant`'s, built in), on a store or against a server (`--url`), as the REST API has them.
 */
export function registerRecipeCommands(program: Command, io: CliIo): void {
  const recipe = program
    .command('recipe')
    .description("recipes: what a scheduler runs (the project's own, _tenant's and the built-in ones)");
  withClientOptions(recipe.command('list'))
    .description('list the recipes the project can name: engine, where each comes from, description')
    .option('--json', 'print JSON {recipes: [...], invalid: [{path, message}]} as the REST API does')
    .action((options: { json?: boolean }, command: Command) =>
      withClient(command, io, async (client) => {
        const list = await client.listRecipes();
        if (options.json) return void printJson(io, list);
        for (const line of listLines(list)) io.stdout.write(`${line}\n`);
        for (const invalid of list.invalid)
          io.stdout.write(`invalid: ${invalid.message.split('\n').join('\n  ')}\n`);
      }),
    );
  withClientOptions(recipe.command('get'))
    .description("print a recipe's YAML document (the project's, else _tenant's, else the built-in one)")
    .argument('<name>', 'recipe name')
    .option('--json', 'print JSON {name, description, engine, source, path, version, yaml, ...}')
    .action((name: string, options: { json?: boolean }, command: Command) =>
      withClient(command, io, async (client) => {
        const detail = await client.getRecipe(name);
        if (options.json) return void printJson(io, detail);
        io.stdout.write(detail.yaml.endsWith('\n') ? detail.yaml : `${detail.yaml}\n`);
        if (detail.source !== 'project')
          io.stderr.write(`(${detail.source === 'builtin' ? 'built in' : 'from _tenant'})\n`);
        if (detail.invalid !== null) io.stderr.write(`invalid: ${detail.invalid}\n`);
      }),
    );
  withClientOptions(recipe.command('set'))
    .description(
      'create or replace a recipe of the project from a YAML file (checked first: a refused one changes nothing)',
    )
    .argument('<name>', 'recipe name')
    .requiredOption('-f, --file <file>', 'the recipe YAML; - reads it from standard input')
    .option('--as <user>', 'the user writing it; default admin; not with --url')
    .action(async (name: string, options: { file: string; as?: string }, command: Command) => {
      const yaml = await readYamlInput(io, options.file);
      await withClient(
        command,
        io,
        async (client) => {
          const result = await client.setRecipe(name, yaml);
          io.stdout.write(
            `${result.created ? 'created' : 'updated'} ${result.path} (version ${result.version})\n`,
          );
        },
        { as: options.as },
      );
    });
  withClientOptions(recipe.command('delete'))
    .description(
      "delete a recipe of the project: its document goes to the trash; schedulers naming it then use _tenant's or the built-in one of that name, or fail to load",
    )
    .argument('<name>', 'recipe name')
    .option('--as <user>', 'the user deleting it; default admin; not with --url')
    .action((name: string, options: { as?: string }, command: Command) =>
      withClient(
        command,
        io,
        async (client) => {
          const { trashPath } = await client.deleteRecipe(name);
          io.stdout.write(`deleted recipe ${name}; restore with: ursa doc restore ${trashPath}\n`);
        },
        { as: options.as },
      ),
    );
}
