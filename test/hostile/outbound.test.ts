import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { httpEngineOptions } from '../../src/app/configured.js';
import { loadConfig } from '../../src/config/index.js';
import { createHttpEngine, type HttpEngineOptions } from '../../src/engines/http.js';
import type { HostLookup } from '../../src/engines/outbound-connect.js';
import { buildApp } from '../../src/http/app.js';
import { canonicalAddress } from '../../src/net/address-range.js';
import { type OutboundRules, outboundRefusal, parseOutboundEntry } from '../../src/net/outbound-policy.js';
import { DIALECTS } from '../support/dialects.js';
import { reply, startHookServer } from '../support/hook-server.js';
import { httpEngineRequest, httpRecipe, runHttpRecipeOnce } from '../support/http-run.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { freePort } from '../support/server.js';

// Issue #19: the http engine connects only where the operator's outbound policy allows, decided on
// the address each connection actually goes to: a host name that resolves to a denied address
// (DNS rebinding) is refused like the address itself. By default link-local addresses (cloud
// metadata) and Ursa's own HTTP listener are refused. A refusal is a failed run that says why.
// Every server here is on 127.0.0.1; names resolve through an injected lookup, never DNS.

const DEFAULT_LINK_LOCAL =
  '169.254.0.0/16 (link-local, cloud metadata) is denied by default; an outboundAllow range may allow it';

/** A resolver that knows only `names` (name → addresses), and counts its calls. */
function resolver(names: Record<string, string[]>) {
  return vi.fn<HostLookup>(async (hostname) => {
    const addresses = names[hostname];
    if (addresses === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address }));
  });
}

async function run(url: string, options: HttpEngineOptions = {}) {
  return createHttpEngine(options).run(httpEngineRequest(url));
}

describe('link-local and "this host" addresses are refused by default, in every spelling (issue #19)', () => {
  it.each([
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 port 80', DEFAULT_LINK_LOCAL],
    ['http://169.254.169.254./latest/', '169.254.169.254 port 80', DEFAULT_LINK_LOCAL],
    ['http://0xa9fea9fe/', '169.254.169.254 port 80', DEFAULT_LINK_LOCAL],
    ['http://2852039166/', '169.254.169.254 port 80', DEFAULT_LINK_LOCAL],
    ['http://0251.0376.0251.0376/', '169.254.169.254 port 80', DEFAULT_LINK_LOCAL],
    ['https://[::ffff:169.254.169.254]/', '169.254.169.254 port 443', DEFAULT_LINK_LOCAL],
    ['http://[::ffff:a9fe:a9fe]:8080/', '169.254.169.254 port 8080', DEFAULT_LINK_LOCAL],
    ['http://[0:0:0:0:0:ffff:169.254.1.1]/', '169.254.1.1 port 80', DEFAULT_LINK_LOCAL],
    [
      'http://[fe80::1]/',
      'fe80::1 port 80',
      'fe80::/10 (link-local) is denied by default; an outboundAllow range may allow it',
    ],
    [
      'http://[fd00:ec2::254]/latest/',
      'fd00:ec2::254 port 80',
      'fd00:ec2::254/128 (cloud metadata) is denied by default; an outboundAllow range may allow it',
    ],
    [
      'http://100.100.100.200/latest/',
      '100.100.100.200 port 80',
      '100.100.100.200/32 (cloud metadata) is denied by default; an outboundAllow range may allow it',
    ],
    [
      'http://0.0.0.0:8080/',
      '0.0.0.0 port 8080',
      '0.0.0.0/8 (this host) is denied by default; an outboundAllow range may allow it',
    ],
    [
      'http://[::]:8080/',
      ':: port 8080',
      '::/128 (this host) is denied by default; an outboundAllow range may allow it',
    ],
  ])('refuses %s as a failed run naming the address and the rule', async (url, where, rule) => {
    const lookup = resolver({});
    expect(await run(url, { lookup })).toEqual({
      status: 'failed',
      reason: `outbound policy refuses ${where}: ${rule}`,
    });
    // An address in the URL goes through the same check without a lookup.
    expect(lookup).not.toHaveBeenCalled();
  });

  it('refuses a name that resolves to a link-local address (DNS rebinding), at connect time', async () => {
    const lookup = resolver({ 'metadata.attacker.example': ['169.254.169.254'] });
    expect(await run('http://metadata.attacker.example/latest/meta-data/', { lookup })).toEqual({
      status: 'failed',
      reason: `outbound policy refuses metadata.attacker.example (169.254.169.254) port 80: ${DEFAULT_LINK_LOCAL}`,
    });
    expect(lookup.mock.calls).toEqual([['metadata.attacker.example']]);
  });

  it('a host name in outboundAllow does not lift the default denial: the name may resolve anywhere', async () => {
    const lookup = resolver({ 'hooks.attacker.example': ['169.254.169.254'] });
    const result = await run('http://hooks.attacker.example/', {
      lookup,
      outbound: { allow: ['hooks.attacker.example'] },
    });
    expect(result.reason).toBe(
      `outbound policy refuses hooks.attacker.example (169.254.169.254) port 80: ${DEFAULT_LINK_LOCAL}`,
    );
  });

  it('connects to the first allowed address of a name, never to a denied one', async () => {
    const server = await startHookServer(reply(200, 'reached'));
    const lookup = resolver({ 'hooks.example.test': ['169.254.169.254', '127.0.0.1'] });
    expect(await run(`http://hooks.example.test:${server.port}/hook`, { lookup })).toEqual({
      status: 'done',
      output: 'reached',
    });
    expect(server.received.map((r) => r.headers.host)).toEqual([`hooks.example.test:${server.port}`]);
  });

  it('tries the next allowed address when one does not connect, as for localhost on ::1 and 127.0.0.1', async () => {
    const server = await startHookServer(reply(200, 'reached'));
    const lookup = resolver({ 'hooks.example.test': ['::1', '127.0.0.1'] });
    expect(await run(`http://hooks.example.test:${server.port}/`, { lookup })).toEqual({
      status: 'done',
      output: 'reached',
    });
  });

  it('keeps reaching loopback servers other than Ursa itself', async () => {
    const server = await startHookServer(reply(200, 'ok'));
    const result = await run(`${server.origin}/`, {
      outbound: { listeners: [{ host: '127.0.0.1', port: 1 }] },
    });
    expect(result).toEqual({ status: 'done', output: 'ok' });
  });
});

describe("Ursa's own HTTP listener is refused, however it is named (issue #19)", () => {
  it.each([
    ['127.0.0.1', 'http://127.0.0.1:PORT/brain/x', '127.0.0.1'],
    ['127.0.0.1', 'http://[::ffff:127.0.0.1]:PORT/', '127.0.0.1'],
    ['127.0.0.1', 'http://ursa.attacker.example:PORT/', 'ursa.attacker.example (127.0.0.1)'],
    ['0.0.0.0', 'http://127.0.0.1:PORT/', '127.0.0.1'],
    ['::', 'http://ursa.attacker.example:PORT/', 'ursa.attacker.example (127.0.0.1)'],
    ['localhost', 'http://127.0.0.1:PORT/', '127.0.0.1'],
  ])('listening on %s: refuses %s before a connection is made', async (host, url, where) => {
    const ursa = await startHookServer(reply(200, 'Ursa API'));
    const lookup = resolver({ 'ursa.attacker.example': ['127.0.0.1'] });
    const result = await run(url.replace('PORT', String(ursa.port)), {
      lookup,
      outbound: { listeners: [{ host, port: ursa.port }] },
    });
    const shown = host.includes(':') ? `[${host}]` : host;
    expect(result).toEqual({
      status: 'failed',
      reason: `outbound policy refuses ${where} port ${ursa.port}: it is Ursa's own HTTP listener ${shown}:${ursa.port}`,
    });
    expect(ursa.connections()).toBe(0);
  });

  it('takes the listener from the configured host and port, also for ursa worker', () => {
    const config = loadConfig({
      cwd: '/nonexistent',
      env: { URSA_HOST: '0.0.0.0', URSA_PORT: '9000', URSA_OUTBOUND_DENY: '10.0.0.0/8' },
    });
    expect(httpEngineOptions(config)).toEqual({
      outbound: { allow: [], deny: ['10.0.0.0/8'], listeners: [{ host: '0.0.0.0', port: 9000 }] },
      secretHosts: {},
    });
  });
});

describe('outboundDeny and outboundAllow, on the address connected to (issue #19)', () => {
  it('refuses a denied address and a denied name; the server never sees a connection', async () => {
    const server = await startHookServer(reply(200, 'ok'));
    const lookup = resolver({ 'hooks.attacker.example': ['127.0.0.1'] });
    expect(await run(`${server.origin}/`, { outbound: { deny: ['127.0.0.1'] } })).toEqual({
      status: 'failed',
      reason: `outbound policy refuses 127.0.0.1 port ${server.port}: outboundDeny has 127.0.0.1`,
    });
    const byName = await run(`http://hooks.attacker.example:${server.port}/`, {
      lookup,
      outbound: { deny: ['*.attacker.example'] },
    });
    expect(byName.reason).toBe(
      `outbound policy refuses hooks.attacker.example (127.0.0.1) port ${server.port}: outboundDeny has *.attacker.example`,
    );
    expect(server.connections()).toBe(0);
  });

  it('refuses an allowed name that resolves into a denied range: the deny list wins', async () => {
    const server = await startHookServer(reply(200, 'ok'));
    const lookup = resolver({ 'hooks.example.test': ['127.0.0.1'] });
    const result = await run(`http://hooks.example.test:${server.port}/`, {
      lookup,
      outbound: { allow: ['hooks.example.test'], deny: ['127.0.0.0/8'] },
    });
    expect(result.reason).toBe(
      `outbound policy refuses hooks.example.test (127.0.0.1) port ${server.port}: outboundDeny has 127.0.0.0/8`,
    );
    expect(server.connections()).toBe(0);
  });

  it('with an allow list, reaches only what it names or holds', async () => {
    const server = await startHookServer(reply(200, 'ok'));
    const lookup = resolver({ 'hooks.example.test': ['127.0.0.1'], 'other.example.test': ['127.0.0.1'] });
    const allow = { lookup, outbound: { allow: ['hooks.example.test', '10.0.0.0/8'] } };
    expect(await run(`http://hooks.example.test:${server.port}/`, allow)).toEqual({
      status: 'done',
      output: 'ok',
    });
    expect(await run(`http://other.example.test:${server.port}/`, allow)).toEqual({
      status: 'failed',
      reason: `outbound policy refuses other.example.test (127.0.0.1) port ${server.port}: no outboundAllow entry names the host or holds the address`,
    });
    expect(await run(`${server.origin}/`, allow)).toEqual({
      status: 'failed',
      reason: `outbound policy refuses 127.0.0.1 port ${server.port}: no outboundAllow entry names the host or holds the address`,
    });
    expect(await run(`${server.origin}/`, { outbound: { allow: ['127.0.0.0/8'] } })).toEqual({
      status: 'done',
      output: 'ok',
    });
    expect(server.received).toHaveLength(2);
  });

  it('refuses to build an engine with an entry that is neither a host nor a range', () => {
    expect(() => createHttpEngine({ outbound: { deny: ['10.0.0.0/8', 'http://x/'] } })).toThrow(
      'outbound.deny[1]: "http://x/" is not a host name or IP address',
    );
  });
});

describe('outboundRefusal: the decision alone (issue #19)', () => {
  const rules = (allow: string[], deny: string[] = [], listeners: OutboundRules['listeners'] = []) => ({
    allow: allow.map((e) => parseOutboundEntry(e) as never),
    deny: deny.map((e) => parseOutboundEntry(e) as never),
    listeners,
  });
  const at = (address: string, port = 80, host = address) => ({ host, address, port });

  it('an outboundAllow range lifts a default denial; a deny entry beats an allow entry', () => {
    expect(outboundRefusal(rules(['169.254.169.254/32']), at('169.254.169.254'))).toBeUndefined();
    expect(outboundRefusal(rules(['169.254.169.254/32']), at('169.254.1.1'))).toBe(
      'outbound policy refuses 169.254.1.1 port 80: no outboundAllow entry names the host or holds the address',
    );
    expect(outboundRefusal(rules(['10.0.0.0/8'], ['10.1.0.0/16']), at('10.1.2.3'))).toBe(
      'outbound policy refuses 10.1.2.3 port 80: outboundDeny has 10.1.0.0/16',
    );
  });

  it('reads an IPv4-mapped range as the IPv4 range and matches either spelling of an address', () => {
    const mapped = rules([], ['::ffff:10.0.0.0/104']);
    expect(outboundRefusal(mapped, at('10.9.9.9'))).toBe(
      'outbound policy refuses 10.9.9.9 port 80: outboundDeny has ::ffff:10.0.0.0/104',
    );
    expect(outboundRefusal(mapped, at('::ffff:10.9.9.9'))).toBe(
      'outbound policy refuses 10.9.9.9 port 80: outboundDeny has ::ffff:10.0.0.0/104',
    );
    expect(outboundRefusal(rules([], ['fd00::/8']), at('FD12::1'))).toBe(
      'outbound policy refuses fd12::1 port 80: outboundDeny has fd00::/8',
    );
  });

  it('a wildcard listener covers the loopback and every address of the machine, on its port only', () => {
    const any = rules([], [], [{ host: '0.0.0.0', port: 8080 }]);
    const own = "it is Ursa's own HTTP listener 0.0.0.0:8080";
    expect(outboundRefusal(any, at('127.0.0.5', 8080))).toBe(
      `outbound policy refuses 127.0.0.5 port 8080: ${own}`,
    );
    expect(outboundRefusal(any, at('::1', 8080))).toBe(`outbound policy refuses ::1 port 8080: ${own}`);
    expect(outboundRefusal(any, at('192.0.2.10', 8080), ['192.0.2.10'])).toBe(
      `outbound policy refuses 192.0.2.10 port 8080: ${own}`,
    );
    expect(outboundRefusal(any, at('192.0.2.11', 8080), ['192.0.2.10'])).toBeUndefined();
    expect(outboundRefusal(any, at('127.0.0.1', 8081))).toBeUndefined();
    const one = rules([], [], [{ host: '127.0.0.1', port: 8080 }]);
    expect(outboundRefusal(one, at('127.0.0.2', 8080))).toBeUndefined();
  });

  it('"this host" addresses reach every listener, even where an outboundAllow range lifts their default denial', () => {
    for (const host of ['127.0.0.1', '0.0.0.0', '::1', 'localhost']) {
      const shown = host.includes(':') ? `[${host}]` : host;
      for (const allow of [
        ['0.0.0.0/0', '::/0'],
        ['0.0.0.0/8', '::/128'],
      ]) {
        const lifted = rules(allow, [], [{ host, port: 8080 }]);
        for (const address of ['0.0.0.0', '0.1.2.3', '::', '::ffff:0.0.0.0']) {
          expect(outboundRefusal(lifted, at(address, 8080))).toBe(
            `outbound policy refuses ${canonicalAddress(address)} port 8080: it is Ursa's own HTTP listener ${shown}:8080`,
          );
        }
        expect(outboundRefusal(lifted, at('0.0.0.0', 8081))).toBeUndefined();
      }
    }
  });
});

describe('a refused connection is a failed run with the reason, on each store (issue #19)', () => {
  let t: TestRuntime | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it.each(DIALECTS)(
    "%s: a recipe aimed at Ursa's own REST API fails, and the API sees no connection",
    async (dialect) => {
      const port = await freePort();
      t = await testRuntime('2026-06-01T08:00:00Z', {
        dialect,
        http: { outbound: { listeners: [{ host: '127.0.0.1', port }] } },
      });
      const app = await buildApp({ rt: t.rt });
      let connections = 0;
      app.server.on('connection', () => connections++);
      await app.listen({ host: '127.0.0.1', port });
      try {
        expect((app.server.address() as AddressInfo).port).toBe(port);
        const trace = await runHttpRecipeOnce(
          t,
          httpRecipe(`http://127.0.0.1:${port}/brain/acme/project/ops/scheduler`),
        );
        const reason = `outbound policy refuses 127.0.0.1 port ${port}: it is Ursa's own HTTP listener 127.0.0.1:${port}`;
        expect([trace.run.outcome, trace.run.reason, trace.process?.status]).toEqual([
          'failed',
          reason,
          'failed',
        ]);
        expect(trace.log).toContain(reason);
        expect(trace.feed).toContain(reason);
        expect(connections).toBe(0);
      } finally {
        await app.close();
      }
    },
  );

  it.each(DIALECTS)('%s: a recipe aimed at the cloud metadata address fails at once', async (dialect) => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const trace = await runHttpRecipeOnce(t, httpRecipe('http://169.254.169.254/latest/meta-data/iam/'));
    expect([trace.run.outcome, trace.run.reason]).toEqual([
      'failed',
      `outbound policy refuses 169.254.169.254 port 80: ${DEFAULT_LINK_LOCAL}`,
    ]);
  });
});
