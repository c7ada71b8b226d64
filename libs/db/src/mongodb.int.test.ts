/**
 * @module @gatehouse/db/mongodb.int.test — the `mongodb` driver end to end against FerretDB v1 (MongoDB
 * wire protocol on SQLite), started on a free 127.0.0.1 port by `startFerretDb` of libs/testing; see scripts/install-ferretdb.sh.
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { defineEntity, p, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntitySchema } from '@mikro-orm/core';
import type { MongoEntityManager } from '@mikro-orm/mongodb';
import { createLogger } from '@gatehouse/observability';
import { freePort, startFerretDb, type FerretDb } from '@gatehouse/testing';
import { createInProcessBus, newEnvelope, type Bus, type Envelope } from '@gatehouse/bus';
import { deliveryJobFields, openDatabase, resealOutbox, startOutboxRelay } from './index.ts';
import { openJobSecret, ringOf, sealJobSecret } from '@gatehouse/crypto';
import type { Database, ServiceSchema } from './index.ts';

const logger = createLogger('silent');

const Widget = defineEntity({
  name: 'Widget',
  tableName: 'dbtest_widgets',
  properties: {
    _id: p.uuid().primary(),
    name: p.string().unique(),
    size: p.integer().index(),
    createdAt: p.bigint('number').fieldName('created_at'),
  },
});

/** keys as the SQL tables name them: a named key column, an auto-increment key */
const Code = defineEntity({
  name: 'DbtestCode',
  tableName: 'dbtest_codes',
  properties: { codeHash: p.string().length(64).fieldName('code_hash').primary(), owner: p.string() },
});
const Attempt = defineEntity({
  name: 'DbtestAttempt',
  tableName: 'dbtest_attempts',
  properties: { id: p.bigint('number').primary().autoincrement(), owner: p.string() },
});

const schema: ServiceSchema = { service: 'dbtest', entities: [Widget, Code, Attempt] as unknown as EntitySchema<any, any>[], migrations: [] };

let ferret: FerretDb;
let db: Database;
let dbName: string;

beforeAll(async () => {
  ferret = await startFerretDb();
  dbName = `gatehouse_${randomBytes(6).toString('hex')}`;
  db = await openDatabase({ type: 'mongodb', url: ferret.url(dbName) }, schema, { logger });
});

afterAll(async () => {
  await db?.close();
  await ferret?.stop();
});

const raw = (name: string) => (db.fork() as unknown as MongoEntityManager).getCollection(name);

describe('mongodb driver (FerretDB)', () => {
  it('opens with the MongoDB driver on the database named in the url', async () => {
    expect(db.type).toBe('mongodb');
    const em = db.fork() as unknown as MongoEntityManager;
    expect(em.getConnection().getDb().databaseName).toBe(dbName);
    expect(await db.orm.checkConnection()).toMatchObject({ ok: true });
  });

  it('ensures the entities\' declared indexes at open, and the unique one is enforced', async () => {
    const em = db.fork() as unknown as MongoEntityManager;
    const indexes = await em.getCollection('dbtest_widgets').indexes();
    const byKey = new Map(indexes.map((i) => [Object.keys(i.key).join(','), i]));
    expect(byKey.get('name')).toMatchObject({ unique: true });
    expect(byKey.has('size')).toBe(true);
    expect(byKey.get('size')?.unique).toBeFalsy();

    const name = `dup-${randomUUID()}`;
    const first = db.fork();
    first.persist(first.create(Widget, { _id: randomUUID(), name, size: 1, createdAt: 1 }));
    await first.flush();
    const second = db.fork();
    second.persist(second.create(Widget, { _id: randomUUID(), name, size: 2, createdAt: 2 }));
    await expect(second.flush()).rejects.toBeInstanceOf(UniqueConstraintViolationException);
    expect(await db.fork().count(Widget, { name })).toBe(1);
  });

  it('creates, finds, updates and deletes through a forked EntityManager', async () => {
    const id = randomUUID();
    const em = db.fork();
    em.persist(em.create(Widget, { _id: id, name: `w-${id}`, size: 3, createdAt: 1_700_000_000 }));
    await em.flush();

    const found = await db.fork().findOneOrFail(Widget, { _id: id });
    expect(found).toMatchObject({ _id: id, name: `w-${id}`, size: 3, createdAt: 1_700_000_000 });
    const raw = await (db.fork() as unknown as MongoEntityManager).getCollection('dbtest_widgets').findOne({ _id: id as never });
    // fieldName mapping applies; a bigint column is a BSON number, not MikroORM's decimal string (issue 32 §4)
    expect(raw).toMatchObject({ _id: id, name: `w-${id}`, size: 3, created_at: 1_700_000_000 });
    expect(typeof raw?.created_at).toBe('number');
    expect(await (db.fork() as unknown as MongoEntityManager).getCollection('dbtest_widgets').countDocuments({ _id: id as never, created_at: { $type: 'number' } })).toBe(1);

    const editor = db.fork();
    const w = await editor.findOneOrFail(Widget, { _id: id });
    w.size = 7;
    await editor.flush();
    expect((await db.fork().findOneOrFail(Widget, { _id: id })).size).toBe(7);
    expect(await db.fork().find(Widget, { size: { $gte: 7 }, _id: id })).toHaveLength(1);

    const remover = db.fork();
    remover.remove(await remover.findOneOrFail(Widget, { _id: id }));
    await remover.flush();
    expect(await db.fork().findOne(Widget, { _id: id })).toBeNull();
  });

  it('finds many with filter, order and limit', async () => {
    const tag = randomUUID().slice(0, 8);
    const em = db.fork();
    for (const size of [30, 10, 20]) em.persist(em.create(Widget, { _id: randomUUID(), name: `${tag}-${size}`, size, createdAt: size }));
    await em.flush();
    const rows = await db.fork().find(Widget, { name: { $re: `^${tag}-` } }, { orderBy: { size: 'desc' }, limit: 2 });
    expect(rows.map((r) => r.size)).toEqual([30, 20]);
  });

  it('a primary key is the document _id whatever its SQL column; an auto-increment key gets growing numbers', async () => {
    const em = db.fork();
    em.persist(em.create(Code, { codeHash: 'h1', owner: 'a' }));
    em.persist(em.create(Attempt, { owner: 'a' } as never));
    em.persist(em.create(Attempt, { owner: 'a' } as never));
    await em.flush();
    expect(await raw('dbtest_codes').findOne({ _id: 'h1' as never })).toMatchObject({ _id: 'h1', owner: 'a' });
    expect((await db.fork().findOneOrFail(Code, { codeHash: 'h1' })).owner).toBe('a');
    const ids = (await db.fork().find(Attempt, { owner: 'a' }, { orderBy: { id: 'asc' } })).map((a) => Number(a.id));
    expect(ids).toHaveLength(2);
    expect(ids[1]).toBeGreaterThan(ids[0]!);
  });

  it('refuses raw SQL with unimplemented', async () => {
    await expect(db.execute('select 1')).rejects.toMatchObject({ code: 'unimplemented' });
  });

  /** a bus that records what it was given; `failNext` makes the next publish fail after recording nothing */
  function recordingBus(): { published: Envelope[]; bus: Bus } {
    const published: Envelope[] = [];
    return { published, bus: { publish: async (e: Envelope) => void published.push(e), consume: () => Promise.reject(new Error('unused')), close: async () => {} } };
  }
  /** every document of the service's collections that still carries pending events */
  async function pendingDocs(): Promise<number> {
    let n = 0;
    for (const c of ['dbtest_widgets', 'dbtest_outbox']) n += await raw(c).countDocuments({ _outbox: { $exists: true } });
    return n;
  }

  it('FerretDB v1 runs no multi-document transactions, so db.transactional is the single-document unit of work', () => {
    expect(db.mongoAtomicity).toBe('single-document');
  });

  it('the outbox (issue 23): the events ride in the document the unit of work inserts, the relay publishes them in order, then removes them', async () => {
    const { published, bus } = recordingBus();
    const events = [1, 2, 3].map((i) => newEnvelope('note.created', 'dbtest', { i }));
    const id = randomUUID();
    await db.transactional(async (em) => {
      em.persist(em.create(Widget, { _id: id, name: `w-${id}`, size: 1, createdAt: 1 }));
      await em.flush(); // held back: the unit of work is written once, with its events
      for (const e of events) db.outbox.enqueue(em, e);
    });
    const doc = await raw('dbtest_widgets').findOne({ _id: id as never });
    expect(Object.keys(doc?._outbox ?? {}).sort()).toEqual(events.map((e) => e.id).sort());
    expect(await raw('dbtest_outbox').countDocuments({})).toBe(0);
    const relay = startOutboxRelay({ db, bus, logger, intervalMs: 60_000, batchSize: 2 });
    expect(await relay.flush()).toBe(3);
    await relay.stop();
    expect(published).toEqual(events);
    // the state stays, the events are gone
    const after = await raw('dbtest_widgets').findOne({ _id: id as never });
    expect(after).toMatchObject({ _id: id, name: `w-${id}` });
    expect(after).not.toHaveProperty('_outbox');
  });

  it('an update carries its events next to those another unit of work left on the same document, and none is overwritten', async () => {
    const { published, bus } = recordingBus();
    const id = randomUUID();
    const first = newEnvelope('note.created', 'dbtest', { n: 1 });
    const second = newEnvelope('note.updated', 'dbtest', { n: 2 });
    await db.transactional(async (em) => {
      em.persist(em.create(Widget, { _id: id, name: `u-${id}`, size: 1, createdAt: 1 }));
      db.outbox.enqueue(em, first);
    });
    await db.transactional(async (em) => {
      (await em.findOneOrFail(Widget, { _id: id })).size = 2;
      db.outbox.enqueue(em, second);
    });
    const doc = await raw('dbtest_widgets').findOne({ _id: id as never });
    expect(doc).toMatchObject({ size: 2 });
    expect(Object.keys(doc?._outbox ?? {}).sort()).toEqual([first.id, second.id].sort());
    const relay = startOutboxRelay({ db, bus, logger, intervalMs: 60_000 });
    await relay.flush();
    await relay.stop();
    expect(published).toEqual([first, second]);
    expect(await pendingDocs()).toBe(0);
  });

  it('a unit of work that changes no document (only deletes) writes its events as one <service>_outbox document, which the relay deletes', async () => {
    const { published, bus } = recordingBus();
    const id = randomUUID();
    const seed = db.fork();
    seed.persist(seed.create(Widget, { _id: id, name: `d-${id}`, size: 1, createdAt: 1 }));
    await seed.flush();
    const gone = newEnvelope('note.deleted', 'dbtest', { id });
    await db.transactional(async (em) => {
      await em.nativeDelete(Widget, { _id: id });
      db.outbox.enqueue(em, gone);
    });
    expect(await raw('dbtest_outbox').countDocuments({})).toBe(1);
    const relay = startOutboxRelay({ db, bus, logger, intervalMs: 60_000 });
    expect(await relay.flush()).toBe(1);
    await relay.stop();
    expect(published).toEqual([gone]);
    expect(await raw('dbtest_outbox').countDocuments({})).toBe(0);
  });

  it('gatehouse reseal re-seals the delivery jobs riding in documents and in <service>_outbox (issue 32 §2)', async () => {
    const OLD = 'old-encryption-key-of-32-characters';
    const NEW = 'new-encryption-key-of-32-characters';
    const job = (to: string) => newEnvelope('email.send', 'dbtest', { to, template: 'verify', sealed_variables: sealJobSecret(ringOf(OLD), 'email.send', to, `{"n":"${to}"}`) } as never);
    const riding = job('a@example.com');
    const alone = job('b@example.com');
    const id = randomUUID();
    await db.transactional(async (em) => {
      em.persist(em.create(Widget, { _id: id, name: `r-${id}`, size: 1, createdAt: 1 }));
      db.outbox.enqueue(em, riding);
    });
    await db.transactional(async (em) => {
      await em.nativeDelete(Widget, { _id: randomUUID() });
      db.outbox.enqueue(em, alone);
    });
    expect(await resealOutbox(db, deliveryJobFields(ringOf(NEW, OLD)))).toEqual({ resealed: 2, unreadable: 0 });
    expect(await resealOutbox(db, deliveryJobFields(ringOf(NEW, OLD)))).toEqual({ resealed: 0, unreadable: 0 });
    // the relay publishes them as they are now: the new key alone opens them
    const { published, bus } = recordingBus();
    const relay = startOutboxRelay({ db, bus, logger, intervalMs: 60_000 });
    await relay.flush();
    await relay.stop();
    const opened = published.filter((e) => e.name === 'email.send').map((e) => {
      const data = e.data as { to: string; sealed_variables: string };
      return openJobSecret(ringOf(NEW), 'email.send', data.to, data.sealed_variables);
    });
    expect(opened.sort()).toEqual(['{"n":"a@example.com"}', '{"n":"b@example.com"}']);
  });

  it('int64 values stored as strings by earlier versions read as numbers and are converted once at open', async () => {
    const id = randomUUID();
    // what MikroORM's bigint type wrote before: a decimal string
    await raw('dbtest_widgets').insertOne({ _id: id as never, name: `s-${id}`, size: 1, created_at: '1800000000' });
    expect((await db.fork().findOneOrFail(Widget, { _id: id })).createdAt).toBe(1_800_000_000);
    // the conversion ran at this database's first open (its marker is recorded): reopen as a database of an earlier version
    expect(await raw('dbtest_migrations').countDocuments({ _id: 'mongodb_int64_numbers' as never })).toBe(1);
    await raw('dbtest_migrations').deleteOne({ _id: 'mongodb_int64_numbers' as never });
    const again = await openDatabase({ type: 'mongodb', url: ferret.url(dbName) }, schema, { logger });
    await again.close();
    expect(await raw('dbtest_widgets').findOne({ _id: id as never })).toMatchObject({ created_at: 1_800_000_000 });
    expect(await raw('dbtest_widgets').countDocuments({ created_at: { $type: 'string' } })).toBe(0);
    // range queries see it among the numbers
    expect(await db.fork().count(Widget, { _id: id, createdAt: { $gte: 1_799_999_999 } })).toBe(1);
  });

  it('events enqueued before a native delete are written before it runs (issue 32 §4)', async () => {
    const id = randomUUID();
    const seed = db.fork();
    seed.persist(seed.create(Widget, { _id: id, name: `o-${id}`, size: 1, createdAt: 1 }));
    await seed.flush();
    await raw('dbtest_outbox').deleteMany({});
    const before = newEnvelope('note.deleted', 'dbtest', { id });
    await expect(db.transactional(async (em) => {
      db.outbox.enqueue(em, before);
      await em.nativeDelete(Widget, { _id: id });
      throw new Error('process dies after the delete');
    })).rejects.toThrow('process dies');
    const docs = await raw('dbtest_outbox').find({}).toArray();
    expect(docs.flatMap((d) => Object.keys(d._outbox ?? {}))).toEqual([before.id]);
    await raw('dbtest_outbox').deleteMany({});
  });

  it('a unit of work that throws writes neither its documents nor its events', async () => {
    const id = randomUUID();
    await expect(db.transactional(async (em) => {
      em.persist(em.create(Widget, { _id: id, name: `t-${id}`, size: 1, createdAt: 1 }));
      await em.flush();
      db.outbox.enqueue(em, newEnvelope('note.created', 'dbtest', {}));
      throw new Error('refused after the state change');
    })).rejects.toThrow('refused after the state change');
    expect(await db.fork().count(Widget, { _id: id })).toBe(0);
    expect(await pendingDocs()).toBe(0);
  });

  describe('a failure between the state change and its event (injected) loses and duplicates nothing', () => {
    const connection = (): { insertMany: (...a: unknown[]) => Promise<unknown> } =>
      (db.fork() as unknown as MongoEntityManager).getConnection() as unknown as { insertMany: (...a: unknown[]) => Promise<unknown> };

    /** Makes the connection's next `insertMany` fail, before (`before`) or after (`after`) the server wrote it. */
    function failNextInsert(when: 'before' | 'after'): () => void {
      const conn = connection();
      const real = conn.insertMany;
      conn.insertMany = async function (this: unknown, ...args: unknown[]) {
        conn.insertMany = real;
        if (when === 'after') await real.apply(this, args);
        throw new Error(`injected: connection lost ${when} the write`);
      };
      return () => { conn.insertMany = real; };
    }

    it('the write fails before the server stored it: no state, no event', async () => {
      const id = randomUUID();
      const restore = failNextInsert('before');
      try {
        await expect(db.transactional(async (em) => {
          em.persist(em.create(Widget, { _id: id, name: `f-${id}`, size: 1, createdAt: 1 }));
          db.outbox.enqueue(em, newEnvelope('note.created', 'dbtest', { id }));
        })).rejects.toThrow(/injected/);
      } finally { restore(); }
      expect(await db.fork().count(Widget, { _id: id })).toBe(0);
      expect(await pendingDocs()).toBe(0);
    });

    it('the answer is lost after the server stored it: the state and its event are both there, published once', async () => {
      const { published, bus } = recordingBus();
      const id = randomUUID();
      const event = newEnvelope('note.created', 'dbtest', { id });
      const restore = failNextInsert('after');
      try {
        await expect(db.transactional(async (em) => {
          em.persist(em.create(Widget, { _id: id, name: `a-${id}`, size: 1, createdAt: 1 }));
          db.outbox.enqueue(em, event);
        })).rejects.toThrow(/injected/);
      } finally { restore(); }
      expect(await db.fork().count(Widget, { _id: id })).toBe(1);
      const relay = startOutboxRelay({ db, bus, logger, intervalMs: 60_000 });
      await relay.flush();
      await relay.flush();
      await relay.stop();
      expect(published).toEqual([event]);
    });

    it('the relay loses the database after publishing, before removing: the same envelope (same id) goes again, which the bus drops as a duplicate', async () => {
      const inProcess = createInProcessBus({ logger });
      const seen: string[] = [];
      await inProcess.consume({ durable: 'dbtest-dup', names: ['note.created'], maxAttempts: 1, backoffMs: [100], handler: async (e) => void seen.push(e.id) });
      const id = randomUUID();
      const event = newEnvelope('note.created', 'dbtest', { id });
      await db.transactional(async (em) => {
        em.persist(em.create(Widget, { _id: id, name: `r-${id}`, size: 1, createdAt: 1 }));
        db.outbox.enqueue(em, event);
      });
      const coll = raw('dbtest_widgets');
      const proto = Object.getPrototypeOf(coll) as { updateOne: typeof coll.updateOne };
      const original = proto.updateOne;
      let failed = 0;
      proto.updateOne = function (this: typeof coll, ...args: Parameters<typeof coll.updateOne>) {
        if (failed === 0 && JSON.stringify(args[1]).includes('$unset')) { failed++; return Promise.reject(new Error('injected: database gone')); }
        return original.apply(this, args);
      } as typeof coll.updateOne;
      const relay = startOutboxRelay({ db, bus: inProcess, logger, intervalMs: 60_000 });
      try {
        await relay.flush(); // published, the removal failed: still pending
      } finally { proto.updateOne = original; }
      expect(failed).toBe(1);
      expect(Object.keys((await coll.findOne({ _id: id as never }))?._outbox ?? {})).toEqual([event.id]);
      await relay.flush(); // published again, removed
      await relay.stop();
      await new Promise((r) => setTimeout(r, 200));
      await inProcess.close();
      expect(seen).toEqual([event.id]);
      expect(await pendingDocs()).toBe(0);
    });
  });

  it('an unreachable server is unavailable', async () => {
    const port = await freePort();
    await expect(openDatabase({ type: 'mongodb', url: `mongodb://127.0.0.1:${port}/none?serverSelectionTimeoutMS=500` }, schema, { logger }))
      .rejects.toMatchObject({ code: 'unavailable' });
  });
});
