import { EventEmitter } from 'node:events';
import net from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { dependencyState, readinessReport, redisTarget, watchDependencies, watchDependency, watchRedis, type DependencyCheck } from './dependency.ts';

function recordingLogger() {
  const lines: Array<{ level: string; obj: Record<string, unknown>; msg: string }> = [];
  return {
    lines,
    info: (obj: Record<string, unknown>, msg: string) => { lines.push({ level: 'info', obj, msg }); },
    warn: (obj: Record<string, unknown>, msg: string) => { lines.push({ level: 'warn', obj, msg }); },
  };
}

const check = (name: string, target: string, fail?: string, hang = false): DependencyCheck => ({
  name, target, check: () => (hang ? new Promise(() => undefined) : fail ? Promise.reject(new Error(fail)) : Promise.resolve()),
});

describe('readinessReport', () => {
  it('is ready when every check answers', async () => {
    expect(await readinessReport([check('database', 'db'), check('redis', 'r:6379')])).toEqual({
      ready: true, checks: { database: 'ok', redis: 'ok' }, down: null,
    });
  });

  it('names the first dependency down with its target and cause; a hung check times out', async () => {
    const r = await readinessReport([check('database', 'db'), check('redis', 'r:6379', 'connect ECONNREFUSED'), check('nats', 'n:4222', undefined, true)], 50);
    expect(r.ready).toBe(false);
    expect(r.down).toEqual({ name: 'redis', target: 'r:6379', cause: 'connect ECONNREFUSED' });
    expect(r.checks).toEqual({ database: 'ok', redis: 'down (r:6379): connect ECONNREFUSED', nats: 'down (n:4222): no answer within 50 ms' });
  });

  it('lists a check that is not required as down, and stays ready (issue 37 §4: a gateway without authz)', async () => {
    const r = await readinessReport([check('service:authn', 'a:1'), { ...check('service:authz', 'z:1', 'No connection established'), required: false }]);
    expect(r).toEqual({ ready: true, checks: { 'service:authn': 'ok', 'service:authz': 'down (z:1): No connection established' }, down: null });
    const authnDown = await readinessReport([{ ...check('service:authz', 'z:1', 'gone'), required: false }, check('service:authn', 'a:1', 'refused')]);
    expect(authnDown.ready).toBe(false);
    expect(authnDown.down).toEqual({ name: 'service:authn', target: 'a:1', cause: 'refused' });
  });

  it('reports several connections to one dependency as one entry, down if any is', async () => {
    const r = await readinessReport([check('database', 'a'), check('database', 'b', 'gone'), check('database', 'c')]);
    expect(r.checks).toEqual({ database: 'down (b): gone' });
  });
});

describe('dependencyState and watchRedis', () => {
  it('logs one line per state change, never per error', () => {
    const log = recordingLogger();
    const s = dependencyState(log, 'redis', 'r:6379');
    s.up();
    for (let i = 0; i < 40; i++) s.down(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
    s.up();
    s.up();
    expect(log.lines).toEqual([
      { level: 'warn', obj: { dependency: 'redis', target: 'r:6379', cause: 'connect ECONNREFUSED 127.0.0.1:6379' }, msg: 'redis is down' },
      { level: 'info', obj: { dependency: 'redis', target: 'r:6379' }, msg: 'redis is back up' },
    ]);
  });

  it('turns an ioredis client\'s error and ready events into state lines and checks it with PING', async () => {
    const log = recordingLogger();
    let pings = 0;
    const client = Object.assign(new EventEmitter(), { ping: async () => { pings++; return 'PONG'; } });
    const c = watchRedis(client, log, 'redis://user:secret@cache.internal:6380/2');
    expect(c.name).toBe('redis');
    expect(c.target).toBe('cache.internal:6380');
    client.emit('error', new Error('read ECONNRESET'));
    client.emit('error', new Error('connect ECONNREFUSED'));
    client.emit('ready');
    expect(log.lines.map((l) => l.msg)).toEqual(['redis is down', 'redis is back up']);
    expect(JSON.stringify(log.lines)).not.toContain('secret');
    await c.check();
    expect(pings).toBe(1);
    expect(redisTarget('not a url')).toBe('redis');
    expect(redisTarget('redis://127.0.0.1')).toBe('127.0.0.1:6379');
  });
});

/** A TCP listener the test stops and starts again on the same port, and a check that connects to it. */
async function tcpDependency(name: string) {
  let server: net.Server | null = null;
  let port = 0;
  const start = async (): Promise<void> => {
    const s = net.createServer((socket) => socket.end());
    await new Promise<void>((resolve, reject) => { s.once('error', reject); s.listen(port, '127.0.0.1', resolve); });
    port = (s.address() as net.AddressInfo).port;
    server = s;
  };
  await start();
  const dep: DependencyCheck = {
    name, target: `127.0.0.1:${port}`,
    check: () => new Promise<void>((resolve, reject) => {
      const c = net.connect(port, '127.0.0.1');
      c.once('connect', () => { c.destroy(); resolve(); });
      c.once('error', reject);
    }),
  };
  return {
    dep,
    start,
    stop: () => new Promise<void>((resolve) => { server!.close(() => resolve()); server = null; }),
  };
}

const until = async (ok: () => boolean, ms = 5000): Promise<void> => {
  for (const end = Date.now() + ms; !ok() && Date.now() < end;) await new Promise((r) => setTimeout(r, 20));
};

describe('watchDependency', () => {
  it('logs one line when the dependency goes down and one when it is back, from its background probe alone', async () => {
    const log = recordingLogger();
    const db = await tcpDependency('database');
    const watched = watchDependency(db.dep, log, 50);
    try {
      await new Promise((r) => setTimeout(r, 200)); // several probes while it is up: nothing to say
      expect(log.lines).toEqual([]);
      await db.stop();
      await until(() => log.lines.length === 1);
      await new Promise((r) => setTimeout(r, 300)); // more failed probes: still one line
      expect(log.lines).toEqual([{ level: 'warn', obj: { dependency: 'database', target: db.dep.target, cause: expect.stringContaining('ECONNREFUSED') }, msg: 'database is down' }]);
      await expect(watched.check()).rejects.toThrow(/ECONNREFUSED/); // what /readyz sees
      await db.start();
      await until(() => log.lines.length === 2);
      expect(log.lines[1]).toEqual({ level: 'info', obj: { dependency: 'database', target: db.dep.target }, msg: 'database is back up' });
      await watched.check();
      expect(log.lines).toHaveLength(2);
    } finally {
      watched.close();
      await db.stop();
    }
  });

  it('learns of an outage from /readyz probes too, once two in a row failed', async () => {
    const log = recordingLogger();
    const db = await tcpDependency('database');
    const watched = watchDependency(db.dep, log, 60_000);
    await db.stop();
    await expect(watched.check()).rejects.toThrow();
    expect(log.lines).toEqual([]); // one failed probe is not an outage yet
    await expect(watched.check()).rejects.toThrow();
    expect(log.lines.map((l) => l.msg)).toEqual(['database is down']);
    watched.close();
  });

  it('watches the pools of one dependency as one (one line per outage), and leaves alone a check that logs its own state', async () => {
    const log = recordingLogger();
    const db = await tcpDependency('database');
    const own: DependencyCheck = { ...check('redis', 'r:6379', 'refused'), logsOwnState: true };
    const watched = watchDependencies([own, db.dep, { ...db.dep }, { ...db.dep }], log, 50);
    try {
      expect(watched.map((w) => w.name)).toEqual(['redis', 'database']);
      await expect(watched[0]!.check()).rejects.toThrow('refused');
      await db.stop();
      await until(() => log.lines.length > 0);
      await new Promise((r) => setTimeout(r, 300));
      expect(log.lines.map((l) => l.msg)).toEqual(['database is down']);
    } finally {
      for (const w of watched) w.close();
    }
  });
});
