#!/usr/bin/env node
// A reference agent service for Ursa's `agent` engine (docs/agent-protocol.md): a small real HTTP
// service with no dependencies. Ursa POSTs a run to /runs; the service answers 202 with its own
// run reference at once and works on the run in the background, telling Ursa how it goes through
// the run's callback URL, with the run's credential:
//
//   running → a few steps, each a line of output and heartbeats meanwhile → (optionally) blocked
//   with a question, waiting for POST /runs/<reference>/answer → running → complete (done).
//
// Params of the run (the recipe's and the scheduler's `params`) steer it, for demos and tests:
//   steps (default 3), stepMs (default 200), heartbeatMs (default 100): how long it works;
//   question: ask it after the first step (it reaches the run's user in Ursa's inbox) and wait for
//   the answer, which Ursa POSTs to /runs/<reference>/answer;
//   fail: end `failed` with this reason instead of `done`; failAttempts: n: the first n attempts
//   of a run end `failed` (a scheduler's `retry` then tries it again);
//   silent: true: accept the run and never call back (Ursa ends it `heartbeat-timeout`), not even
//   to confirm a stop (Ursa ends it `cancelled` once the stop's grace period is over).
// A run whose callbacks Ursa has not answered for longer than the run's heartbeat timeout is
// abandoned (Ursa shut down for good, or ended it `heartbeat-timeout`): the service stops it.
// POST /runs/<reference>/stop ends a run `stopped`. GET /runs lists what it received (for tests;
// the credentials only with AGENT_SERVICE_SHOW_CREDENTIALS=1).
//
// Fencing: the answer to every callback names the run's current attempt and fencing token, which
// move on when another worker of Ursa adopts the run; the service takes them, and refuses (409) a
// stop or an answer carrying a token below the largest it has seen.
//
// Usage: node examples/agent-service/server.mjs [port]   (default 0: any free port)
// It prints one JSON line {"listening": <port>} on standard output when it is ready.
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? process.env.PORT ?? 0);
/** The runs by reference. */
const runs = new Map();
/** Reference by Idempotency-Key and attempt: a repeated delivery of one attempt starts nothing new. */
const byDelivery = new Map();
let counter = 0;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * POSTs one callback, retried with backoff (0.1 s doubling to 2 s, for about 17 s in all) while Ursa
 * cannot be reached or answers 5xx: Ursa restarting is a pause, not the end of the run.
 */
async function callback(run, kind, fields = {}) {
  const body = JSON.stringify({ fencingToken: run.fencingToken, attempt: run.attempt, ...fields });
  for (let attempt = 0; attempt < 12; attempt++) {
    try {
      const response = await fetch(`${run.callbackUrl}/${kind}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${run.credential}` },
        body,
      });
      const answer = await response.text();
      run.calls.push({ kind, status: response.status });
      if (response.ok) {
        run.heardAt = Date.now();
        follow(run, JSON.parse(answer));
      }
      if (response.status < 500) {
        // 401: the run ended or the credential is not its own any more; 409: another attempt took over.
        if (response.status >= 400) run.refused = { kind, status: response.status, answer };
        return response.status;
      }
    } catch {
      // Ursa restarting or unreachable: retried below.
    }
    await sleep(Math.min(100 * 2 ** attempt, 2000));
  }
  return 0;
}

/**
 * Takes the attempt Ursa names in a callback's answer: when a worker of Ursa adopted the run (its
 * own was lost), the run goes on under the adopter's attempt and fencing token.
 */
function follow(run, { attempt, fencingToken }) {
  if (Number.isInteger(fencingToken) && fencingToken > run.fencingToken) {
    run.fencingToken = fencingToken;
    run.attempt = attempt;
    run.adoptions.push({ attempt, fencingToken });
  }
}

/**
 * Whether a request of Ursa (a stop, an answer) carries a fencing token below the largest this run
 * has seen: it comes from a worker whose attempt was taken over, and is refused.
 */
function stale(run, body) {
  const token = Number(body?.fencingToken);
  if (Number.isInteger(token) && token < run.fencingToken) return true;
  if (Number.isInteger(token)) follow(run, { attempt: body.attempt, fencingToken: token });
  return false;
}

/** Works on one run in the background, as the params say. */
async function work(run) {
  const { params } = run;
  if (params.silent === true) return;
  const heartbeatMs = Number(params.heartbeatMs ?? 100);
  const beat = setInterval(() => {
    if (run.over) return;
    // Ursa unheard of for longer than its heartbeat timeout: it is gone for good, or has ended the
    // run heartbeat-timeout. Either way nobody waits for this run any more: stop working on it.
    if (run.heartbeatTimeoutMs !== undefined && Date.now() - run.heardAt > run.heartbeatTimeoutMs) {
      run.over = true;
      run.abandoned = true;
      run.answered?.('');
      return;
    }
    void callback(run, 'heartbeat');
  }, heartbeatMs);
  try {
    await callback(run, 'status', { status: 'running', message: 'started' });
    const steps = Number(params.steps ?? 3);
    for (let step = 1; step <= steps && !run.over; step++) {
      await sleep(Number(params.stepMs ?? 200));
      if (run.over) break;
      if ((await callback(run, 'output', { text: `step ${step} of ${steps} done\n` })) >= 400) return;
      if (step === 1 && typeof params.question === 'string') {
        // The question reaches the run's user in Ursa's inbox; the answer comes back to /answer.
        await callback(run, 'status', { status: 'blocked', question: params.question });
        run.answer = await new Promise((resolve) => {
          run.answered = resolve;
        });
        if (run.over) break;
        await callback(run, 'output', { text: `answer: ${run.answer}\n` });
        await callback(run, 'status', { status: 'running', message: 'answered' });
      }
    }
    if (run.over) return;
    run.over = true;
    const failing = typeof params.fail === 'string' || run.delivered <= Number(params.failAttempts ?? 0);
    if (failing)
      await callback(run, 'complete', {
        status: 'failed',
        reason: params.fail ?? `attempt ${run.delivered} failed`,
      });
    else await callback(run, 'complete', { status: 'done', summary: `finished ${steps} steps\n` });
  } finally {
    clearInterval(beat);
  }
}

function readJson(req) {
  return new Promise((resolve) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'));
      } catch {
        resolve(undefined);
      }
    });
  });
}

function send(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://service');
  const body = req.method === 'POST' ? await readJson(req) : undefined;
  if (req.method === 'POST' && url.pathname === '/runs') {
    const callbackInfo = body?.callback;
    const trigger = body?.trigger;
    if (typeof callbackInfo?.url !== 'string' || typeof callbackInfo?.credential !== 'string' || !trigger)
      return send(res, 400, { error: 'expected an Ursa agent run: trigger and callback' });
    const delivery = `${req.headers['idempotency-key']}/${trigger.attempt}`;
    const known = byDelivery.get(delivery);
    if (known !== undefined) return send(res, 202, { reference: known });
    const reference = `svc-${++counter}`;
    byDelivery.set(delivery, reference);
    const run = {
      reference,
      idempotencyKey: req.headers['idempotency-key'],
      correlationId: trigger.correlationId,
      fencingToken: trigger.fencingToken,
      attempt: trigger.attempt,
      /** The attempt this run was delivered as; `attempt` follows adoptions. */
      delivered: trigger.attempt,
      deliveredToken: trigger.fencingToken,
      adoptions: [],
      params: body.params ?? {},
      callbackUrl: callbackInfo.url,
      credential: callbackInfo.credential,
      heartbeatTimeoutMs: callbackInfo.heartbeatTimeoutMs,
      /** When Ursa last answered a callback (2xx), ms: the delivery counts as one. */
      heardAt: Date.now(),
      calls: [],
      over: false,
    };
    runs.set(reference, run);
    send(res, 202, { reference });
    void work(run);
    return;
  }
  const match = /^\/runs\/([^/]+)\/(answer|stop)$/.exec(url.pathname);
  const run = match ? runs.get(match[1]) : undefined;
  if (req.method === 'POST' && match && run === undefined) return send(res, 404, { error: 'no such run' });
  if (req.method === 'POST' && match && stale(run, body)) {
    run.staleRequests = (run.staleRequests ?? 0) + 1;
    return send(res, 409, { error: `fencing token ${body.fencingToken} is below ${run.fencingToken}` });
  }
  if (req.method === 'POST' && match?.[2] === 'answer') {
    run.answered?.(String(body?.answer ?? ''));
    return send(res, 200, { reference: run.reference });
  }
  if (req.method === 'POST' && match?.[2] === 'stop') {
    // Idempotent: a stop of a run already over answers the same. A silent run takes it and never confirms.
    if (!run.over && run.params.silent !== true) {
      run.over = true;
      run.answered?.('');
      void callback(run, 'complete', { status: 'stopped', reason: String(body?.reason ?? 'stopped') });
    }
    return send(res, 200, { reference: run.reference, stopped: true });
  }
  if (req.method === 'GET' && url.pathname === '/runs') {
    // Credentials are shown only to the tests that start it so (to try one after its run ended).
    const show = process.env.AGENT_SERVICE_SHOW_CREDENTIALS === '1';
    return send(
      res,
      200,
      [...runs.values()].map(({ answered: _, ...shown }) => (show ? shown : { ...shown, credential: '***' })),
    );
  }
  send(res, 404, { error: 'not found' });
});

server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ listening: server.address().port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
