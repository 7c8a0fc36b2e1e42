// The shape of src/ and web/src (issue #21), checked by dependency-cruiser in `npm run shape`,
// which `npm test` runs. Layers, top to bottom; a module imports its own layer or lower ones,
// never a higher one. The composition root (src/app/, src/ursa.ts, src/index.ts) may import
// anything and is imported by no layer but the interfaces.
//
// Layering counts every import, type-only ones included (a type names what a module knows);
// the cycle rule counts only imports that remain at run time.

/** @type {{ name: string, paths: string[] }[]} */
const LAYERS = [
  { name: 'interfaces', paths: ['src/cli/', 'src/http/', 'src/mcp/', 'src/tools/', 'web/src/'] },
  { name: 'services', paths: ['src/client/', 'src/service/'] },
  { name: 'runtime', paths: ['src/runtime/', 'src/fencing/'] },
  { name: 'catalog', paths: ['src/catalog/'] },
  { name: 'adapters', paths: ['src/store/', 'src/engines/', 'src/processes/'] },
  {
    name: 'domain',
    paths: [
      'src/runs/',
      'src/scheduler/',
      'src/recipes/',
      'src/workflows/',
      'src/decisions/',
      'src/contract/',
    ],
  },
  {
    name: 'foundation',
    paths: ['src/cron/', 'src/time/', 'src/yaml/', 'src/config/', 'src/errors/', 'src/net/', 'src/log\\.ts$'],
  },
];

const COMPOSITION_ROOT = ['src/app/', 'src/ursa\\.ts$', 'src/index\\.ts$'];

/** `^(a|b|…)` for dependency-cruiser's path patterns (regular expressions on the module path). */
const under = (paths) => `^(${paths.join('|')})`;

const layerRules = LAYERS.slice(1).map((layer, i) => ({
  name: `layer-${layer.name}`,
  comment: `${layer.name} (${layer.paths.join(', ')}) imports only its own layer or lower ones`,
  severity: 'error',
  from: { path: under(layer.paths) },
  to: { path: under(LAYERS.slice(0, i + 1).flatMap((l) => l.paths)) },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      comment: 'no import cycle among the modules that load at run time',
      severity: 'error',
      from: { path: '^(src|web/src)/' },
      to: {
        circular: true,
        dependencyTypesNot: ['type-only'],
        viaOnly: { dependencyTypesNot: ['type-only'] },
      },
    },
    {
      name: 'runtime-not-service',
      comment: 'the runtime is driven by the service layer, never the other way round',
      severity: 'error',
      from: { path: '^src/runtime/' },
      to: { path: '^src/service/' },
    },
    {
      name: 'client-not-http',
      comment: 'the client speaks to the HTTP API over the wire, it does not import the server',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: '^src/http/' },
    },
    {
      name: 'interfaces-not-store',
      comment: 'an interface reaches the store through the client or the service layer only',
      severity: 'error',
      from: { path: under(LAYERS[0].paths) },
      to: { path: '^src/store/' },
    },
    ...layerRules,
    {
      name: 'in-a-layer',
      comment: 'every module of src/ is in a layer or the composition root: add a new folder to LAYERS',
      severity: 'error',
      from: { path: '^src/', pathNot: under([...LAYERS.flatMap((l) => l.paths), ...COMPOSITION_ROOT]) },
      to: {},
    },
    {
      name: 'resolvable',
      comment: 'every import resolves: an import the check cannot follow is one it cannot judge',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'layers-not-composition-root',
      comment: 'only the interfaces and the composition root import the composition root',
      severity: 'error',
      from: { path: under(LAYERS.slice(1).flatMap((l) => l.paths)) },
      to: { path: under(COMPOSITION_ROOT) },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^(src|web/src)/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.mjs', '.json'] },
    progress: { type: 'none' },
  },
};
