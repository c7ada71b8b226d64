/**
 * @module @gatehouse/bus/outbox-nats.test
 * ARCHITECTURE §4 "nothing is lost when NATS is down": a state change and its outbox row commit
 * while the test's own nats-server is stopped; the relay's publish fails and the row stays
 * pending; once NATS is back (same port, same store) the event reaches a durable consumer once.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { defineEntity, p } from '@mikro-orm/core';
import type { EntitySchema } from '@mikro-orm/core';
import { createLogger } from '@gatehouse/observability';
import { freePort } from '@gatehouse/testing';
import { createScratchDatabase, openDatabase, startOutboxRelay } from '@gatehouse/db';
import type { DatabaseType, ServiceSchema } from '@gatehouse/db';
import { createJetStreamBus, newEnvelope } from './index.ts';
import type { Bus, Envelope } from './index.ts';

const NATS_SERVER = '/usr/sbin/nats-server';
const logger = createLogger('silent');

const Account = defineEntity({
  name: 'Account',
  tableName: 'obtest_accounts',
  properties: { id: p.uuid().primary(), email: p.string() },
});
const schema: ServiceSchema = {
  service: 'obtest',
  entities: [Account as unknown as EntitySchema<any, any>],
  migrations: [
    {
      name: '0001_accounts',
      up: ({ ddl }) => ddl.createTable('obtest_accounts', [{ name: 'id', type: 'uuid', primary: true }, { name: 'email', type: 'string' }]),
    },
  ],
};

async function waitForPort(port: number, up: boolean, ms = 10000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const c = tcpConnect(port, '127.0.0.1');
      c.once('connect', () => (c.destroy(), resolve(true)));
      c.once('error', () => resolve(false));
    });
    if (open === up) return;
    if (Date.now() > end) throw new Error(`port ${port} did not become ${up ? 'open' : 'closed'}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const until = async (cond: () => boolean | Promise<boolean>, ms = 20000): Promise<void> => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe('transactional outbox with NATS down', () => {
  let port: number;
  let storeDir: string;
  let nats: ChildProcess | undefined;

  const startNats = async (): Promise<void> => {
    nats = spawn(NATS_SERVER, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: 'ignore' });
    await waitForPort(port, true);
  };
  const stopNats = async (): Promise<void> => {
    const proc = nats;
    nats = undefined;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    await exited;
    await waitForPort(port, false);
  };

  beforeAll(async () => {
    port = await freePort();
    storeDir = mkdtempSync(join(tmpdir(), 'gatehouse-nats-'));
    await startNats();
  });
  afterAll(async () => {
    await stopNats();
    rmSync(storeDir, { recursive: true, force: true });
  });

  it.each<DatabaseType>(['sqlite', 'postgres'])('on %s: the event written while NATS is down is delivered exactly once after it returns', async (type) => {
    if (!nats) await startNats();
    const scratch = await createScratchDatabase(type);
    const db = await openDatabase(scratch.options, schema, { logger });
    const suffix = randomBytes(4).toString('hex');
    let bus: Bus | undefined;
    try {
      bus = await createJetStreamBus({ url: `nats://127.0.0.1:${port}`, logger, stream: `OB_${suffix}`, subjectPrefix: `ob${suffix}`, publishTimeoutMs: 1000 });
      const delivered: Envelope[] = [];
      await bus.consume({ durable: 'audit', names: ['user.signup'], maxAttempts: 5, backoffMs: [200], handler: async (e) => void delivered.push(e) });

      await stopNats();

      const accountId = randomUUID();
      const event = newEnvelope('user.signup', 'obtest', { user_id: accountId });
      await db.transactional(async (em) => {
        em.persist(em.create(Account, { id: accountId, email: 'a@example.com' }));
        db.outbox.enqueue(em, event);
      });
      expect(await db.execute('select id from obtest_accounts where id = ?', [accountId])).toHaveLength(1);

      const relay = startOutboxRelay({ db, bus, logger, intervalMs: 60_000 });
      expect(await relay.flush()).toBe(0); // publish fails: NATS is down
      const pending = await db.execute<{ published_at: unknown }>('select published_at from obtest_outbox where id = ?', [event.id]);
      expect(pending).toEqual([{ published_at: null }]);

      await startNats();
      let published = 0;
      await until(async () => (published += await relay.flush()) > 0);
      await until(() => delivered.length > 0);
      await new Promise((r) => setTimeout(r, 1500)); // room for a duplicate to show up
      await relay.stop();

      expect(published).toBe(1);
      expect(delivered.map((e) => e.id)).toEqual([event.id]);
      expect(delivered[0]).toEqual(event);
      // acknowledged by JetStream: the row is deleted (issue 23)
      expect(await db.execute('select id from obtest_outbox where id = ?', [event.id])).toEqual([]);
      expect(await relay.flush()).toBe(0);
    } finally {
      await bus?.close();
      await db.close();
      await scratch.drop();
    }
  }, 60_000);
});
