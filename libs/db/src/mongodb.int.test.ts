/**
 * @module @gatehouse/db/mongodb.int.test — the `mongodb` driver end to end against FerretDB v1 (MongoDB
 * wire protocol on SQLite), started by this file on a free 127.0.0.1 port; see scripts/install-ferretdb.sh.
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes, randomUUID } from 'node:crypto';
import { defineEntity, p, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntitySchema } from '@mikro-orm/core';
import type { MongoEntityManager } from '@mikro-orm/mongodb';
import { createLogger } from '@gatehouse/observability';
import { freePort } from '@gatehouse/testing';
import { newEnvelope, type Envelope } from '@gatehouse/bus';
import { openDatabase, startOutboxRelay } from './index.ts';
import type { Database, ServiceSchema } from './index.ts';

const FERRETDB = fileURLToPath(new URL('../../../.tools/bin/ferretdb', import.meta.url));
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

const schema: ServiceSchema = { service: 'dbtest', entities: [Widget as unknown as EntitySchema<any, any>], migrations: [] };

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
}

/** Starts FerretDB on SQLite in a fresh temp dir; resolves once it accepts TCP connections. */
async function startFerretDb(): Promise<{ proc: ChildProcess; port: number; dir: string }> {
  if (!existsSync(FERRETDB)) {
    throw new Error(`ferretdb not found at ${FERRETDB}: run scripts/install-ferretdb.sh first (it installs FerretDB into .tools/bin)`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-ferretdb-'));
  const port = await freePort();
  const proc = spawn(FERRETDB, [
    '--handler=sqlite', `--sqlite-url=file:${dir}/`, `--listen-addr=127.0.0.1:${port}`,
    `--state-dir=${dir}`, '--debug-addr=-', '--telemetry=disable', '--log-level=warn',
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stdout?.on('data', (b: Buffer) => { output += b.toString(); });
  proc.stderr?.on('data', (b: Buffer) => { output += b.toString(); });
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`ferretdb exited with ${proc.exitCode}: ${output}`);
    if (await canConnect(port)) return { proc, port, dir };
    await new Promise((r) => setTimeout(r, 100));
  }
  proc.kill('SIGKILL');
  throw new Error(`ferretdb did not listen on 127.0.0.1:${port} within 20 s: ${output}`);
}

let ferret: { proc: ChildProcess; port: number; dir: string };
let db: Database;
let dbName: string;

beforeAll(async () => {
  ferret = await startFerretDb();
  dbName = `gatehouse_${randomBytes(6).toString('hex')}`;
  db = await openDatabase({ type: 'mongodb', url: `mongodb://127.0.0.1:${ferret.port}/${dbName}` }, schema, { logger });
});

afterAll(async () => {
  await db?.close();
  if (ferret?.proc.pid !== undefined && ferret.proc.exitCode === null) {
    const exited = new Promise((r) => ferret.proc.once('exit', r));
    process.kill(ferret.proc.pid, 'SIGTERM');
    await exited;
  }
  if (ferret) rmSync(ferret.dir, { recursive: true, force: true });
});

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
    // fieldName mapping applies; MikroORM's bigint type stores a decimal string on MongoDB (no int64 mapping)
    expect(raw).toMatchObject({ _id: id, name: `w-${id}`, size: 3, created_at: '1700000000' });

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

  it('refuses raw SQL with unimplemented', async () => {
    await expect(db.execute('select 1')).rejects.toMatchObject({ code: 'unimplemented' });
  });

  it('the outbox (issue 23): events written with the state change in one flush, published in order by the relay, then deleted', async () => {
    const published: Envelope[] = [];
    const bus = { publish: async (e: Envelope) => void published.push(e), consume: () => Promise.reject(new Error('unused')), close: async () => {} };
    const events = [1, 2, 3].map((i) => newEnvelope('note.created', 'dbtest', { i, otp: 'sealed elsewhere' }));
    const id = randomUUID();
    const em = db.fork();
    em.persist(em.create(Widget, { _id: id, name: `w-${id}`, size: 1, createdAt: 1 }));
    for (const e of events) db.outbox.enqueue(em, e);
    await em.flush();
    const coll = (db.fork() as unknown as MongoEntityManager).getCollection('dbtest_outbox');
    expect(await coll.countDocuments({})).toBe(3);
    const relay = startOutboxRelay({ db, bus, logger, intervalMs: 60_000, batchSize: 2 });
    expect(await relay.flush()).toBe(3);
    await relay.stop();
    expect(published).toEqual(events);
    expect(await coll.countDocuments({})).toBe(0);
  });

  it('db.transactional on FerretDB v1: it has no transactions (refuses the `autocommit` field), so the call fails and writes nothing', async () => {
    const id = randomUUID();
    await expect(db.transactional(async (em) => {
      em.persist(em.create(Widget, { _id: id, name: `t-${id}`, size: 1, createdAt: 1 }));
      db.outbox.enqueue(em, newEnvelope('note.created', 'dbtest', {}));
    })).rejects.toThrow(/unknown field "autocommit"/);
    expect(await db.fork().count(Widget, { _id: id })).toBe(0);
  });

  it('an unreachable server is unavailable', async () => {
    const port = await freePort();
    await expect(openDatabase({ type: 'mongodb', url: `mongodb://127.0.0.1:${port}/none?serverSelectionTimeoutMS=500` }, schema, { logger }))
      .rejects.toMatchObject({ code: 'unavailable' });
  });
});
