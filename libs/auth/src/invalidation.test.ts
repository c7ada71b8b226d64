import { describe, it, expect, afterEach } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  combineVersions, createLocalInvalidation, createPostgresInvalidation, createRedisInvalidation, type InvalidationChannel,
} from './invalidation.ts';

/** Resolves once `cond()` holds; fails with `what` when it has not after 10 s (event delivery, not a timing assertion). */
async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (cond()) return;
    await sleep(25);
  }
  throw new Error(`never: ${what}`);
}

describe('createLocalInvalidation', () => {
  it('as the sole writer: the version moves only on publish, per topic, whatever the clock says', async () => {
    let now = 0;
    const c = createLocalInvalidation({ soleWriter: true, nowMs: () => now, pollMs: 1000 });
    expect(c.healthy()).toBe(true);
    const v = c.version('credentials');
    const a = c.version('authz');
    now += 60_000;
    expect(c.version('credentials')).toBe(v);
    await c.publish('credentials');
    expect(c.version('credentials')).not.toBe(v);
    expect(c.version('authz')).toBe(a);
  });

  it('not the sole writer: the version moves once per polling interval, so a cache re-reads at that rate', () => {
    let now = 0;
    const c = createLocalInvalidation({ soleWriter: false, nowMs: () => now, pollMs: 1000 });
    expect(c.healthy()).toBe(false);
    const v = c.version('authz');
    now += 999;
    expect(c.version('authz')).toBe(v);
    now += 1;
    const w = c.version('authz');
    expect(w).not.toBe(v);
    expect(c.version('authz')).toBe(w);
  });

  it('with notifications off (tests only) even the sole writer polls', () => {
    let now = 0;
    const c = createLocalInvalidation({ soleWriter: true, notificationsOff: true, nowMs: () => now, pollMs: 500 });
    expect(c.healthy()).toBe(false);
    const v = c.version('credentials');
    now += 500;
    expect(c.version('credentials')).not.toBe(v);
  });
});

describe('combineVersions', () => {
  it('changes whenever any part changes, and only then', () => {
    let a = 1;
    let b = 7;
    const v = combineVersions(() => a, null, () => b);
    const v0 = v();
    expect(v()).toBe(v0);
    a = 2;
    const v1 = v();
    expect(v1).not.toBe(v0);
    b = 8;
    expect(v()).not.toBe(v1);
  });
});

/** Two processes' channels on one transport: a publish on one moves the other's version, not the other topic's. */
function transportSuite(name: string, open: () => InvalidationChannel): void {
  describe(name, () => {
    const opened: InvalidationChannel[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((c) => c.close()));
    });
    const make = (): InvalidationChannel => {
      const c = open();
      opened.push(c);
      return c;
    };

    it('delivers a publish to every subscriber, topic by topic', async () => {
      const writer = make();
      const reader = make();
      await until(() => writer.healthy() && reader.healthy(), 'both subscribed');
      const cred = reader.version('credentials');
      const authz = reader.version('authz');
      const own = writer.version('credentials');
      await writer.publish('credentials');
      // the writer's own version moved before publish resolved
      expect(writer.version('credentials')).not.toBe(own);
      await until(() => reader.version('credentials') !== cred, 'the reader saw the publish');
      expect(reader.version('authz')).toBe(authz);
    });

    it('stays healthy while its heartbeats come back', async () => {
      const downs: string[] = [];
      const logger = { info: () => undefined, warn: (_o: Record<string, unknown>, msg: string) => { downs.push(msg); } };
      const c = name.startsWith('redis')
        ? createRedisInvalidation('redis://127.0.0.1:6379', `gatehouse:test-${randomBytes(4).toString('hex')}:invalidate:`, { pollMs: 200, logger })
        : createPostgresInvalidation({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' }, { pollMs: 200, logger });
      opened.push(c);
      await until(() => c.healthy(), 'subscribed');
      // ten heartbeat periods: every ping must have come back before the next was due (200 ms periods,
      // a fifth of the default, so a busy CI machine's scheduling delay is not read as a stalled channel)
      await sleep(2000);
      expect({ healthy: c.healthy(), warnings: downs }).toEqual({ healthy: true, warnings: [] });
    });

    it('with notifications off (tests only) it never reports healthy', async () => {
      const off = name.startsWith('redis')
        ? createRedisInvalidation('redis://127.0.0.1:6379', `gatehouse:test-${randomBytes(4).toString('hex')}:invalidate:`, { notificationsOff: true })
        : createPostgresInvalidation({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' }, { notificationsOff: true });
      opened.push(off);
      const on = make();
      await until(() => on.healthy(), 'the other subscribed');
      expect(off.healthy()).toBe(false);
    });
  });
}

const prefix = `gatehouse:test-${randomBytes(4).toString('hex')}:invalidate:`;
transportSuite('redis pub/sub', () => createRedisInvalidation('redis://127.0.0.1:6379', prefix));
transportSuite('postgres LISTEN/NOTIFY', () => createPostgresInvalidation({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' }));

describe('redis pub/sub: a publish waits for its receivers', () => {
  it('resolves only after every receiver Redis counted has acknowledged, so the writer answers after the readers moved', async () => {
    const pfx = `gatehouse:test-${randomBytes(4).toString('hex')}:invalidate:`;
    const writer = createRedisInvalidation('redis://127.0.0.1:6379', pfx);
    // a slow receiver: a plain subscriber that acknowledges 300 ms after the message reached it
    const { Redis } = await import('ioredis');
    const slowSub = new Redis('redis://127.0.0.1:6379');
    const slowPub = new Redis('redis://127.0.0.1:6379');
    let acknowledged = false;
    try {
      await slowSub.subscribe(`${pfx}authz`);
      slowSub.on('message', (_channel: string, message: string) => {
        setTimeout(() => {
          acknowledged = true;
          void slowPub.publish(`${pfx}ack:${message.slice(0, message.indexOf(':'))}`, message);
        }, 300);
      });
      await until(() => writer.healthy(), 'the writer subscribed');
      await writer.publish('authz');
      expect(acknowledged).toBe(true);
    } finally {
      slowSub.disconnect();
      slowPub.disconnect();
      await writer.close();
    }
  });

  it('waits for a receiver slower than one polling interval, up to the interval plus its heartbeat grace', async () => {
    const pfx = `gatehouse:test-${randomBytes(4).toString('hex')}:invalidate:`;
    const writer = createRedisInvalidation('redis://127.0.0.1:6379', pfx, { pollMs: 200 });
    const { Redis } = await import('ioredis');
    const slowSub = new Redis('redis://127.0.0.1:6379');
    const slowPub = new Redis('redis://127.0.0.1:6379');
    let acknowledged = false;
    try {
      await slowSub.subscribe(`${pfx}authz`);
      // acknowledges after 1.5 intervals: a receiver slowed by a loaded machine, still alive
      slowSub.on('message', (_channel: string, message: string) => {
        setTimeout(() => {
          acknowledged = true;
          void slowPub.publish(`${pfx}ack:${message.slice(0, message.indexOf(':'))}`, message);
        }, 300);
      });
      await until(() => writer.healthy(), 'the writer subscribed');
      await writer.publish('authz');
      expect(acknowledged).toBe(true);
    } finally {
      slowSub.disconnect();
      slowPub.disconnect();
      await writer.close();
    }
  });

  it('resolves after a bounded wait (the interval plus the heartbeat grace) when a receiver never acknowledges', async () => {
    const pfx = `gatehouse:test-${randomBytes(4).toString('hex')}:invalidate:`;
    const writer = createRedisInvalidation('redis://127.0.0.1:6379', pfx, { pollMs: 200 });
    const { Redis } = await import('ioredis');
    const silent = new Redis('redis://127.0.0.1:6379');
    try {
      await silent.subscribe(`${pfx}credentials`);
      await until(() => writer.healthy(), 'the writer subscribed');
      const v = writer.version('credentials');
      await writer.publish('credentials'); // would hang without the bound
      expect(writer.version('credentials')).not.toBe(v);
    } finally {
      silent.disconnect();
      await writer.close();
    }
  });
});

describe('postgres LISTEN/NOTIFY: a publish waits for the receivers it knows from their heartbeats', () => {
  const PG = 'postgres://postgres@127.0.0.1:5432/test';
  /**
   * A receiver by hand: LISTENs to `authz`, pings under its own id every 100 ms (so writers count it)
   * and acknowledges each notification after `delayMs` (never when null).
   */
  async function handReceiver(id: string, delayMs: number | null): Promise<{ acknowledged: () => boolean; stop(): Promise<void> }> {
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: PG });
    await client.connect();
    await client.query('LISTEN gatehouse_invalidate_authz');
    let acked = false;
    client.on('notification', (n) => {
      if (delayMs === null) return;
      setTimeout(() => {
        acked = true;
        client.query('SELECT pg_notify($1, $2)', ['gatehouse_invalidate_ack', `${n.payload}|${id}`]).catch(() => undefined);
      }, delayMs);
    });
    let seq = 0;
    const ping = (): Promise<unknown> => client.query('SELECT pg_notify($1, $2)', ['gatehouse_invalidate_ping', `${id}:${++seq}`]);
    await ping();
    const timer = setInterval(() => void ping().catch(() => undefined), 100);
    return { acknowledged: () => acked, async stop() { clearInterval(timer); await client.end(); } };
  }

  it('resolves only after a receiver has acknowledged, so the writer answers after the readers moved', async () => {
    const slow = await handReceiver(`slow${randomBytes(4).toString('hex')}`, 300);
    const writer = createPostgresInvalidation({ connectionString: PG });
    try {
      await until(() => writer.healthy(), 'the writer subscribed');
      await sleep(250); // the receiver's pings reached the writer
      await writer.publish('authz');
      expect(slow.acknowledged()).toBe(true);
    } finally {
      await writer.close();
      await slow.stop();
    }
  });

  it('waits for a receiver slower than one polling interval, up to the interval plus its heartbeat grace', async () => {
    // acknowledges after 1.5 intervals: a receiver slowed by a loaded machine, still alive
    const slow = await handReceiver(`slower${randomBytes(4).toString('hex')}`, 300);
    const writer = createPostgresInvalidation({ connectionString: PG }, { pollMs: 200 });
    try {
      await until(() => writer.healthy(), 'the writer subscribed');
      await sleep(250);
      await writer.publish('authz');
      expect(slow.acknowledged()).toBe(true);
    } finally {
      await writer.close();
      await slow.stop();
    }
  });

  it('resolves after a bounded wait (the interval plus the heartbeat grace) when a receiver never acknowledges', async () => {
    const silent = await handReceiver(`silent${randomBytes(4).toString('hex')}`, null);
    const writer = createPostgresInvalidation({ connectionString: PG }, { pollMs: 200 });
    try {
      await until(() => writer.healthy(), 'the writer subscribed');
      await sleep(250);
      const v = writer.version('authz');
      await writer.publish('authz'); // would hang without the bound
      expect(writer.version('authz')).not.toBe(v);
    } finally {
      await writer.close();
      await silent.stop();
    }
  });
});

/**
 * A writer in a worker thread (an event loop of its own, as another replica has), on the channel the
 * test names. Resolves once it is subscribed; `publish()` asks it to publish `authz` and returns the
 * shared flag it sets when that publish resolved (the moment the writer's response would leave).
 */
async function workerWriter(kind: 'redis' | 'postgres', url: string, prefix: string, pollMs: number): Promise<{ publish(): Int32Array; close(): Promise<void> }> {
  const { Worker } = await import('node:worker_threads');
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(`
    const { parentPort, workerData: w } = require('node:worker_threads');
    (async () => {
      const m = await import(w.module);
      const ch = w.kind === 'redis' ? m.createRedisInvalidation(w.url, w.prefix, { pollMs: w.pollMs }) : m.createPostgresInvalidation({ connectionString: w.url }, { pollMs: w.pollMs });
      const flag = new Int32Array(w.flag);
      while (!ch.healthy()) await new Promise((r) => setTimeout(r, 10));
      parentPort.on('message', async (msg) => {
        if (msg === 'publish') {
          await ch.publish('authz');
          Atomics.store(flag, 0, 1);
          Atomics.notify(flag, 0);
        } else {
          await ch.close();
          parentPort.postMessage('closed');
        }
      });
      parentPort.postMessage('ready');
    })();
  `, { eval: true, workerData: { kind, url, prefix, pollMs, flag: flag.buffer, module: new URL('./invalidation.ts', import.meta.url).href } });
  await new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
  });
  return {
    publish() {
      worker.postMessage('publish');
      return flag;
    },
    async close() {
      const closed = new Promise((resolve) => worker.once('message', resolve));
      worker.postMessage('close');
      await closed;
      await worker.terminate();
    },
  };
}

/**
 * Blocks this thread (its event loop: timers, sockets, everything) until `flag` is set, at most 20 s:
 * a replica starved by a loaded machine or a long synchronous task, while another one writes.
 */
function stallUntil(flag: Int32Array): void {
  Atomics.wait(flag, 0, 0, 20_000);
  if (Atomics.load(flag, 0) !== 1) throw new Error('the writer never answered');
}

/** Listens to the heartbeat pings (`<id>:<seq>`) of every process on the channel, as one more subscriber. */
async function pingSpy(kind: 'redis' | 'postgres', url: string, prefix: string): Promise<{ seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  if (kind === 'redis') {
    const { Redis } = await import('ioredis');
    const spy = new Redis(url);
    await spy.subscribe(`${prefix}ping`);
    spy.on('message', (_channel: string, payload: string) => { seen.push(payload); });
    return { seen, async close() { spy.disconnect(); } };
  }
  const pg = (await import('pg')).default;
  const spy = new pg.Client({ connectionString: url });
  await spy.connect();
  await spy.query('LISTEN gatehouse_invalidate_ping');
  spy.on('notification', (n) => { seen.push(n.payload ?? ''); });
  return { seen, async close() { await spy.end(); } };
}

describe.each([
  ['redis pub/sub', 'redis' as const, 'redis://127.0.0.1:6379'],
  ['postgres LISTEN/NOTIFY', 'postgres' as const, 'postgres://postgres@127.0.0.1:5432/test'],
])('%s: a receiver starved past the publish bound', (_name, kind, url) => {
  it('does not answer from memory once the write returned, before it read the notification', async () => {
    const pfx = `gatehouse:test-${randomBytes(4).toString('hex')}:invalidate:`;
    const spy = await pingSpy(kind, url, pfx);
    const reader = kind === 'redis' ? createRedisInvalidation(url, pfx, { pollMs: 200 }) : createPostgresInvalidation({ connectionString: url }, { pollMs: 200 });
    let writer: Awaited<ReturnType<typeof workerWriter>> | undefined;
    try {
      await until(() => reader.healthy() && spy.seen.some((p) => p.endsWith(':1')), 'the reader subscribed and pinged');
      // its first ping (sent as it subscribed) names it; the writer starts after it
      const readerId = spy.seen.find((p) => p.endsWith(':1'))!.split(':')[0]!;
      writer = await workerWriter(kind, url, pfx, 200);
      // both heard each other's heartbeat (the writer waits for the reader's acknowledgement)
      await sleep(300);
      const before = reader.version('authz');
      // the stall starts just after one of the reader's pings came back (the next is 200 ms away), so
      // no ping of its own is out while it is starved: its heartbeat timer is starved with it
      const pings = spy.seen.filter((p) => p.startsWith(`${readerId}:`)).length;
      await until(() => spy.seen.filter((p) => p.startsWith(`${readerId}:`)).length > pings, 'the reader pinged again');
      await sleep(20);
      const answered = writer.publish();
      // this replica's event loop is blocked from before the notification reached it until after the
      // writer answered: the notification waits unread in its socket, and this read comes first, as a
      // request that was sent after the write's response and is served before the socket is read
      stallUntil(answered);
      expect(reader.version('authz')).not.toBe(before);
      // once its loop runs again it reads the notification and its heartbeat, and trusts them again
      await until(() => reader.healthy(), 'the reader is back up');
    } finally {
      await writer?.close();
      await reader.close();
      await spy.close();
    }
  }, 60_000); // a worker thread loads the module graph first: seconds on a loaded machine
});

describe('redis pub/sub: a publish waits for the processes heard on the channel', () => {
  it('waits the bound for a process that pings but that PUBLISH did not count (its subscription is gone, it has not noticed)', async () => {
    const pfx = `gatehouse:test-${randomBytes(4).toString('hex')}:invalidate:`;
    const writer = createRedisInvalidation('redis://127.0.0.1:6379', pfx, { pollMs: 200 });
    const { Redis } = await import('ioredis');
    const ghost = new Redis('redis://127.0.0.1:6379');
    let seq = 0;
    const timer = setInterval(() => void ghost.publish(`${pfx}ping`, `ghost:${++seq}`).catch(() => undefined), 100);
    try {
      await until(() => writer.healthy(), 'the writer subscribed');
      await sleep(300);
      const t0 = performance.now();
      await writer.publish('authz');
      // the whole bound (three 200 ms intervals, measured on the writer's clock): by then the process
      // that did not acknowledge no longer answers from memory
      expect(performance.now() - t0).toBeGreaterThanOrEqual(600);
    } finally {
      clearInterval(timer);
      ghost.disconnect();
      await writer.close();
    }
  });
});
