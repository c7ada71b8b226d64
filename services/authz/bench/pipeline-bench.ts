/**
 * @module authz/bench/pipeline-bench
 * What one REST `check_permissions` call costs Gatehouse's own code, without the kernel: the all-in-one
 * gateway handler (HTTP layer, fast path, in-process authz client, engine) is driven with node:http
 * request/response objects over an in-memory socket, next to a bare handler that answers a fixed JSON
 * body over the same objects. The difference is the gateway's own work per request, in µs of one core;
 * through real sockets it adds to the kernel's per-request cost, so it bounds the REST throughput ratio
 * that `gateway-bench.ts` measures (the "≥ 0.5× bare HTTP"). A /v1 answer waits for the end of
 * its event-loop turn (`endAtTurnEnd`, gateway/src/http/response.ts): here, where requests run one after
 * another, each gateway figure therefore includes one event-loop iteration per request, which a loaded
 * server shares among all the answers of a turn.
 * Run: `npx node services/authz/bench/pipeline-bench.ts [--requests=<n per round>] [--rounds=<n>]
 * [--figures=bare,1,call,100]` (not a test; `call` is the in-process authz call alone, without HTTP); to profile one figure,
 * `npx node --cpu-prof services/authz/bench/pipeline-bench.ts --figures=100`.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '@gatehouse/config';
import { createInProcessBus } from '@gatehouse/bus';
import { createCallContext } from '@gatehouse/rpc';
import { createLogger, createMetricsRegistry } from '@gatehouse/observability';
import { buildAllInOne } from '../../../bin/all.ts';
import { createGatewayApp } from '../../../gateway/src/app.ts';
import { gatewayOptions } from '../../../gateway/src/main.ts';
import { GatewayResponse } from '../../../gateway/src/http/response.ts';

/** An in-memory socket: what the response writes is kept (last response only), reads never come. */
class MemorySocket extends Duplex {
  readonly remoteAddress = '127.0.0.1';
  readonly remotePort = 40000;
  written: Buffer[] = [];
  override _read(): void {}
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.written.push(chunk);
    cb();
  }
  setTimeout(): this { return this; }
  setNoDelay(): this { return this; }
  setKeepAlive(): this { return this; }
}

interface Injected { status: number; body: string }

/** Runs `handler` on one request over a fresh {@link MemorySocket}; resolves when the response finished. */
function inject(handler: http.RequestListener, method: string, url: string, headers: Record<string, string>, body: string): Promise<Injected> {
  const socket = new MemorySocket();
  const req = new http.IncomingMessage(socket as unknown as Socket);
  req.method = method;
  req.url = url;
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  req.httpVersion = '1.1';
  req.headers = { ...headers, 'content-length': String(Buffer.byteLength(body)) };
  req.complete = true; // as the HTTP parser marks it: else the stream's end reads as a client abort
  req.push(body);
  req.push(null);
  const res = new GatewayResponse(req);
  res.assignSocket(socket as unknown as Socket);
  return new Promise((resolve) => {
    // as node:http's server does on 'finish': detach the socket, then 'close' on the next tick
    res.once('finish', () => {
      res.detachSocket(socket as unknown as Socket);
      process.nextTick(() => {
        res.emit('close');
        const raw = Buffer.concat(socket.written).toString('utf8');
        resolve({ status: res.statusCode, body: raw.slice(raw.indexOf('\r\n\r\n') + 4) });
      });
    });
    handler(req, res);
  });
}

interface Figure { label: string; requests: number; run: (i: number) => Promise<Injected> }

/**
 * Median µs per request of each figure over `rounds` rounds. The figures take turns within each round,
 * so a slow spell of this shared machine hits all of them alike; the first round is a discarded warm-up.
 */
async function measure(figures: readonly Figure[], rounds: number): Promise<number[]> {
  const samples = figures.map((): number[] => []);
  for (let round = 0; round <= rounds; round++) {
    for (const [k, f] of figures.entries()) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < f.requests; i++) await f.run(i);
      if (round > 0) samples[k]!.push(Number(process.hrtime.bigint() - t0) / 1000 / f.requests);
    }
  }
  return samples.map((s) => s.sort((a, b) => a - b)[Math.floor(s.length / 2)]!);
}

async function main(): Promise<void> {
  const args = new Map(process.argv.slice(2).map((a): [string, string | undefined] => [a.split('=')[0]!, a.split('=')[1]]));
  const n = Number(args.get('--requests') ?? 10_000);
  const rounds = Number(args.get('--rounds') ?? 5);

  const dir = mkdtempSync(path.join(tmpdir(), 'gh-pipeline-'));
  const secret = (): string => randomBytes(24).toString('hex');
  const url = 'http://127.0.0.1:8080';
  const { config, errors } = loadConfig('all', [
    '--log-level=warn', `--url=${url}`, `--admin-secret=${secret()}`, '--client-id=bench', `--client-secret=${secret()}`,
    '--jwt-type=HS256', `--jwt-secret=${secret()}`, '--database-type=sqlite', `--database-url=${path.join(dir, 'g.db')}`,
    '--fga-store=memory', '--rate-limit-rps=0', '--app-cookie-secure=false',
  ]);
  if (!config) throw new Error(errors.join('\n'));
  const logger = createLogger('warn');
  const registry = createMetricsRegistry();
  const bus = createInProcessBus({ logger });
  const all = await buildAllInOne(config, { logger, registry, bus });
  const gw = await createGatewayApp(gatewayOptions(config), all.gateway, { logger, registry });
  try {
    const json = { 'content-type': 'application/json', origin: url, host: '127.0.0.1:8080' };
    const signup = await inject(gw.handler, 'POST', '/v1/signup', json, JSON.stringify({ email: 'bench@example.com', password: 'Bench-Passw0rd-2026!', confirm_password: 'Bench-Passw0rd-2026!' }));
    if (signup.status !== 200) throw new Error(`signup answered ${signup.status}: ${signup.body}`);
    const { access_token: token, user } = JSON.parse(signup.body) as { access_token: string; user: { id: string } };
    const admin = { ...json, 'x-service-admin-secret': config.adminSecret! };
    const model = 'model\n  schema 1.1\ntype user\ntype repository\n  relations\n    define reader: [user]\n    define can_read: reader\n';
    for (const [p, body] of [['/v1/admin/fga/model', { dsl: model }], ['/v1/admin/fga/tuples', { tuples: [{ user: `user:${user.id}`, relation: 'reader', object: 'repository:r1' }] }]] as const) {
      const r = await inject(gw.handler, 'POST', p, admin, JSON.stringify(body));
      if (r.status !== 200) throw new Error(`${p} answered ${r.status}: ${r.body}`);
    }
    const bodies = Array.from({ length: 64 }, (_, i) => JSON.stringify({ checks: [{ relation: 'can_read', object: `repository:r${i % 2 === 0 ? 1 : i}` }] }));
    const hundred = Array.from({ length: 16 }, (_, b) => JSON.stringify({ checks: Array.from({ length: 100 }, (_, i) => ({ relation: 'can_read', object: `repository:r${(b * 100 + i) % 3 === 0 ? 1 : b * 100 + i}` })) }));
    const bearer = { ...json, authorization: `Bearer ${token}` };
    const probe = await inject(gw.handler, 'POST', '/v1/check_permissions', bearer, bodies[0]!);
    if (probe.status !== 200 || !probe.body.includes('"allowed":true')) throw new Error(`check_permissions answered ${probe.status}: ${probe.body}`);

    const fixed = Buffer.from(probe.body);
    const bare: http.RequestListener = (req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(fixed.length) });
        res.end(fixed);
      });
    };
    const wanted = new Set((args.get('--figures') ?? 'bare,1,call,100').split(','));
    const authz = all.gateway.clients.authz!;
    const checks = bodies.map((b) => JSON.parse(b) as Record<string, unknown>);
    const callFigure: Figure = {
      label: 'the in-process authz call alone (credential check, codec, engine)',
      requests: n,
      run: async (i) => {
        const ctx = createCallContext({ headers: { authorization: bearer.authorization }, clientIp: '127.0.0.1', protocol: 'rest' });
        return { status: 200, body: JSON.stringify(await authz.call('CheckPermissions', checks[i % 64]!, ctx)) };
      },
    };
    const bareFigure: Figure = { label: 'bare handler (fixed JSON body)', requests: n, run: (i) => inject(bare, 'POST', '/v1/check_permissions', bearer, bodies[i % 64]!) };
    const one: Figure = { label: 'gateway: POST /v1/check_permissions, 1 check, bearer', requests: n, run: (i) => inject(gw.handler, 'POST', '/v1/check_permissions', bearer, bodies[i % 64]!) };
    const many: Figure = { label: 'gateway: POST /v1/check_permissions, 100 checks, bearer', requests: Math.ceil(n / 10), run: (i) => inject(gw.handler, 'POST', '/v1/check_permissions', bearer, hundred[i % 16]!) };
    const figures = ([['bare', bareFigure], ['1', one], ['call', callFigure], ['100', many]] as const).filter(([k]) => wanted.has(k)).map(([, f]) => f);
    const us = await measure(figures, rounds);
    const line = (label: string, value: string): void => console.log(`${label.padEnd(64)} ${value}`);
    console.log(`in-memory sockets, sequential requests; median of ${rounds} rounds (figures take turns), ${n} 1-check requests per round`);
    for (const [k, f] of figures.entries()) line(f.label, `${us[k]!.toFixed(1).padStart(6)} µs/request`);
    const at = (f: Figure): number => us[figures.indexOf(f)] ?? Number.NaN;
    if (figures.includes(bareFigure) && figures.includes(one)) line('gateway own work per 1-check call (gateway - bare)', `${(at(one) - at(bareFigure)).toFixed(1).padStart(6)} µs/request`);
    if (figures.includes(bareFigure) && figures.includes(one) && figures.includes(callFigure)) {
      line('  of which the authz call (+ JSON.stringify of its answer)', `${at(callFigure).toFixed(1).padStart(6)} µs/request`);
      line('  of which HTTP: layer, body, response (own work - call)', `${(at(one) - at(bareFigure) - at(callFigure)).toFixed(1).padStart(6)} µs/request`);
    }
    if (figures.includes(one) && figures.includes(many)) line('cost ratio 100-check / 1-check call (in process, no kernel)', `${(at(many) / at(one)).toFixed(2).padStart(6)}x`);
  } finally {
    await gw.close();
    for (const close of [...all.closers].reverse()) await close();
    await bus.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(() => process.exit(0), (err: unknown) => {
  console.error(err);
  process.exit(1);
});
