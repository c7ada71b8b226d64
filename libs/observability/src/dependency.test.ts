import { EventEmitter } from 'node:events';
import { describe, expect, it } from '@jest/globals';
import { dependencyState, readinessReport, redisTarget, watchRedis, type DependencyCheck } from './dependency.ts';

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
