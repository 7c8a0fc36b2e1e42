// Preloaded by `npm run shape` (node --import) before dependency-cruiser. dependency-cruiser reads
// .ts files through the `typescript` package's JS API (createSourceFile, SyntaxKind …), which
// TypeScript 7, the project's compiler, no longer ships. TypeScript 5.9 is installed beside it
// under the npm alias `typescript5`; this hook sends dependency-cruiser's requests for
// `typescript` (its `import()` of the module and its `require()` of the package.json for the
// version check) there, and nobody else's: `tsc` and the project keep TypeScript 7.
import Module, { register } from 'node:module';

const CRUISER = `${'/node_modules/dependency-cruiser/'}`;

/** `typescript` or `typescript/…` asked for from inside dependency-cruiser, renamed to the alias. */
function redirect(request, from) {
  if (from === undefined || !from.includes(CRUISER)) return request;
  if (request === 'typescript' || request.startsWith('typescript/')) return `typescript5${request.slice(10)}`;
  return request;
}

const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  return resolveFilename.call(this, redirect(request, parent?.filename), parent, ...rest);
};

const hook = `
const CRUISER = ${JSON.stringify(CRUISER)};
${redirect.toString()}
export async function resolve(specifier, context, next) {
  return next(redirect(specifier, context.parentURL), context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
