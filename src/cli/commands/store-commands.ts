import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import type { FastifyInstance } from 'fastify';
import { claimWorker, OPEN_RETRY } from '../../app/compose.js';
import { startTracing } from '../../app/tracing.js';
import { InfrastructureError, UrsaError } from '../../errors/index.js';
import { createLogger } from '../../log.js';
import type { Runtime } from '../../runtime/context.js';
import type { Worker } from '../../runtime/worker.js';
import { type ApplyEntry, applyDirectory } from '../../service/apply.js';
import { cliActor } from '../../service/records.js';
import { documentCount, storeIdentity } from '../../service/store.js';
import { createFirstAdminToken } from '../../service/tokens.js';
import {
  commandConfig,
  openContext,
  withClient,
  withClientOptions,
  withSettingFlags,
  withStoreOptions,
} from '../context.js';
import { type CliIo, ExitCode, printJson } from '../io.js';

/** The demo project `ursa serve --demo` applies: `examples/demo/` of this package. */
export const EXAMPLES_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../../examples/demo');

function printApply(entries: readonly ApplyEntry[], io: CliIo): boolean {
  let ok = true;
  for (const entry of entries) {
    io.stdout.write(
      `${entry.status.padEnd(9)} ${entry.path}${entry.status === 'invalid' ? '' : entry.message ? `  (${entry.message})` : ''}\n`,
    );
    if (entry.status === 'invalid') {
      ok = false;
      for (const issue of entry.issues ?? [])
        io.stdout.write(`          ${issue.path === '' ? '' : `${issue.path}: `}${issue.message}\n`);
    }
  }
  return ok;
}

/** The tenant and project a store command works on: its `--tenant`/`--project`, else the configuration's. */
export function scope(
  command: Command,
  fallback: { tenant: string; project: string },
): { tenant: string; project: string } {
  const opts = command.optsWithGlobals<{ tenant?: string; project?: string }>();
  return { tenant: opts.tenant ?? fallback.tenant, project: opts.project ?? fallback.project };
}

/**
 * On a store without a live token (the first start), creates an admin token for every tenant and
 * prints its secret once on standard error (decisions §6): the way in to a fresh server.
 */
export async function ensureAdminToken(rt: Runtime, io: CliIo): Promise<void> {
  const created = await createFirstAdminToken(rt);
  if (created === undefined) return;
  const { token, secret } = created;
  io.stderr.write(
    `ursa: created an admin token for all tenants (shown once, keep it; ursa token create makes more): ${secret}\n`,
  );
  rt.log.warn({ token: token.id }, 'no token existed: created an admin token for all tenants');
}

/** Listens on `host:port`; returns the URL. A port in use or not allowed is a configuration error. */
async function listen(app: FastifyInstance, host: string, port: number): Promise<string> {
  try {
    return await app.listen({ host, port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    const reason =
      code === 'EADDRINUSE'
        ? `${where} is already in use`
        : code === 'EACCES'
          ? `${where} may not be listened on by this user`
          : code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND'
            ? `${host} is not an address of this machine`
            : `cannot listen on ${where} (${code ?? (error instanceof Error ? error.message : String(error))})`;
    throw new UrsaError('CONFIG_INVALID', `port: ${reason}`, {
      field: 'port',
      value: port,
      allowed: 'a free port (--port, URSA_PORT or port: in ursa.yaml) on an address of this machine (--host)',
    });
  }
}

/**
 * Runs a worker until SIGINT or SIGTERM, then stops it gracefully (decisions §5). On SQLite the
 * worker first takes the store ({@link Worker.takeStore}): a second serving process is refused
 * with `STORE_LOCKED`, and one that loses the store to another stops and exits with it. With `http` (`ursa serve`,
 * decisions §7) it also serves the REST API on `host:port`, with metrics, and on a store without
 * tokens creates the first admin token; the API closes first when the process stops. With an
 * `OTEL_*` trace exporter set, it records spans (issue #26 item 3), flushed after the worker stops.
 */
async function runWorker(
  command: Command,
  io: CliIo,
  options: { demo?: boolean; http?: boolean },
): Promise<void> {
  const probe = commandConfig(command, io);
  const log = createLogger(probe.logLevel);
  // Loaded here, not at the top: every other command starts faster without Fastify and prom-client.
  const http = options.http
    ? { ...(await import('../../http/app.js')), ...(await import('../../runtime/metrics.js')) }
    : undefined;
  const tracing = await startTracing(io.env, log);
  const { config, rt, close } = await openContext(command, io, log, {
    ...(http === undefined ? {} : { metrics: new http.Metrics() }),
    ...(tracing === undefined ? {} : { tracer: tracing.tracer }),
    // A long-running process waits out a store that is restarting, rather than exit at once.
    openRetry: OPEN_RETRY,
  }).catch(async (error: unknown) => {
    await tracing?.shutdown();
    throw error;
  });
  const store = storeIdentity(rt);
  // Set once the worker holds the store (SQLite) or may claim (PostgreSQL).
  let worker: Worker | undefined;
  // True while the worker holds the store or runs: the way out stops it.
  let holding = false;
  let app: FastifyInstance | undefined;
  let loopRunning = false;
  try {
    const claimed = await claimWorker(rt);
    worker = claimed;
    holding = store.dialect === 'sqlite';
    const { tenant, project } = scope(command, config);
    if (options.demo) {
      if ((await documentCount(rt)) === 0) {
        const entries = await applyDirectory(rt, EXAMPLES_DIR, tenant, project, cliActor('demo'));
        log.info(
          { tenant, project, applied: entries.map((e) => `${e.status} ${e.path}`) },
          'demo: examples applied',
        );
      }
    }
    if (http !== undefined) {
      app = await http.buildApp({
        rt,
        loopRunning: () => loopRunning,
        workflows: claimed.executor.workflows,
        promoteWaiting: (run) => claimed.executor.promoteWaiting(run),
        retryAgentRun: (run, reason) => claimed.executor.retryHandedOff(run, reason),
      });
      const url = await listen(app, config.host, config.port);
      log.info({ url, docs: `${url}/docs` }, 'ursa http api listening');
      // After listening: a start that fails (a port in use) leaves no token behind.
      await ensureAdminToken(rt, io);
    }
    holding = true;
    // Listened for from the start-up on: a signal during it (a long reap) stops the worker as
    // gracefully as one after it, rather than end the process with its runs' processes alive.
    const signalled = new Promise<false>((done) => {
      process.once('SIGINT', () => done(false));
      process.once('SIGTERM', () => done(false));
    });
    const startUp = claimed.start();
    const early = await Promise.race([startUp.then(() => undefined), signalled]);
    if (early === undefined) {
      loopRunning = true;
      log.info({ db: store.location, worker: claimed.id }, 'ursa worker running');
    } else {
      // stop() below waits for the start-up to reach a safe point; its failure is of no use now.
      startUp.catch(() => {});
    }
    const lost = early ?? (await Promise.race([signalled, claimed.lost.then(() => true as const)]));
    log.info('stopping: no new claims; finishing running processes');
    loopRunning = false;
    if (app !== undefined) {
      const closing = app;
      app = undefined;
      await closing.close();
    }
    holding = false;
    await claimed.stop();
    log.info('stopped');
    if (lost) {
      throw new InfrastructureError(
        'STORE_LOCKED',
        `store: ${store.location}: another Ursa process took this store over while this one stalled past its lease; this one stopped — a SQLite store serves one process, use PostgreSQL (--db postgres://…) for several workers`,
        { field: 'db', value: store.location },
      );
    }
  } finally {
    await app?.close();
    // A start that failed after taking the store (a port in use) gives it back.
    if (holding) await worker?.stop().catch(() => {});
    await close();
    // The spans of the runs the stop ended go out before the process exits.
    await tracing?.shutdown().catch(() => {});
  }
}

/** `ursa serve`: the scheduler with the REST API (decisions §7); `--demo` applies `examples/` to an empty store. */
function registerServe(program: Command, io: CliIo): void {
  withSettingFlags(
    withStoreOptions(program.command('serve'))
      .option('--host <host>', 'address the REST API listens on (default 127.0.0.1, or URSA_HOST)')
      .option('--port <port>', 'port the REST API listens on (default 8080, or URSA_PORT)'),
  )
    .description('run the scheduler and the REST API (default 127.0.0.1:8080) until SIGINT or SIGTERM')
    .option('--demo', 'on an empty store, apply examples/ first so runs appear at once')
    .action((options: { demo?: boolean }, command: Command) =>
      runWorker(command, io, { demo: options.demo === true, http: true }),
    );
}

/** `ursa worker`: a worker without HTTP; any number share a PostgreSQL store (decisions §5). */
function registerWorker(program: Command, io: CliIo): void {
  withSettingFlags(withStoreOptions(program.command('worker')))
    .description(
      'run a scheduling worker (no HTTP) until SIGINT or SIGTERM; several share a PostgreSQL store',
    )
    .action((_options: unknown, command: Command) => runWorker(command, io, {}));
}

function registerApply(program: Command, io: CliIo): void {
  withStoreOptions(program.command('apply'))
    .description('load the *.yaml of a folder laid out like _vance/… into a project, validating each')
    .argument('<dir>', 'folder with _vance/recipes/*.yaml and _vance/scheduler/*.yaml')
    .option('--as <user>', 'the user the documents are created by', 'admin')
    .action(async (dir: string, options: { as: string }, command: Command) => {
      const { config, rt, close } = await openContext(command, io);
      try {
        const { tenant, project } = scope(command, config);
        const entries = await applyDirectory(rt, resolve(io.cwd, dir), tenant, project, cliActor(options.as));
        if (!printApply(entries, io)) throw new ExitCode(2);
      } finally {
        await close();
      }
    });
}

function registerDoc(program: Command, io: CliIo): void {
  const doc = program.command('doc').description('read documents of a project');
  withClientOptions(doc.command('cat'))
    .description('print a document')
    .argument('<path>', 'document path, e.g. _vance/scheduler/heartbeat.yaml')
    .option('--json', 'print JSON {path, version, body, createdBy, updatedAt, expiresAt}, as REST gives it')
    .action((path: string, options: { json?: boolean }, command: Command) =>
      withClient(command, io, async (client) => {
        const found = await client.docCat(path);
        if (options.json) return printJson(io, found);
        io.stdout.write(found.body.endsWith('\n') ? found.body : `${found.body}\n`);
      }),
    );
  withClientOptions(doc.command('ls'))
    .description('list documents whose path starts with a prefix')
    .argument('[prefix]', 'path prefix, e.g. _vance/logs/scheduler/heartbeat/', '')
    .option('--json', 'print JSON')
    .action((prefix: string, options: { json?: boolean }, command: Command) =>
      withClient(command, io, async (client) => {
        const docs = await client.docLs(prefix);
        if (options.json) {
          const rows = docs.map((d) => ({
            path: d.path,
            version: d.version,
            createdBy: d.createdBy,
            updatedAt: d.updatedAt,
            expiresAt: d.expiresAt,
          }));
          io.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
          return;
        }
        for (const d of docs) io.stdout.write(`${d.path}\n`);
      }),
    );
}

/**
 * The commands that work on a store: serve, worker, apply, validate (issue #3); doc cat/ls also
 * against a server (`--url`); `runs` and `inbox` are in `history.ts`.
 */
export function registerStoreCommands(program: Command, io: CliIo): void {
  registerServe(program, io);
  registerWorker(program, io);
  registerApply(program, io);
  registerDoc(program, io);
}
