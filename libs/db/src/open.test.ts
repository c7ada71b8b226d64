/** @module @gatehouse/db/open.test — openDatabase, migrations and the outbox on every SQL driver. */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { createLogger } from '@gatehouse/observability';
import { openDatabase, createScratchDatabase } from './index.ts';
import type { Database, DatabaseType, ScratchDatabase } from './index.ts';
import { Note, testSchema } from './test-schema.ts';

const logger = createLogger('silent');
const types: DatabaseType[] = ['sqlite', 'postgres', 'mysql', 'mariadb'];

describe.each(types)('openDatabase on %s', (type) => {
  let scratch: ScratchDatabase;
  let db: Database;

  beforeAll(async () => {
    scratch = await createScratchDatabase(type);
    db = await openDatabase(scratch.options, testSchema, { logger });
  });
  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
  });

  it('runs the outbox migration then the service migrations, recorded in <service>_migrations', async () => {
    const rows = await db.execute<{ name: string }>('select name from dbtest_migrations order by name');
    expect(rows.map((r) => r.name)).toEqual(['0000_dbtest_outbox', '0000_dbtest_outbox_trace_parent', '0001_notes', '0002_notes_body_idx']);
    expect(db.type).toBe(type);
  });

  it('a second open (also two at once) applies nothing again', async () => {
    const before = await db.execute<{ name: string; executed_at: number }>('select name, executed_at from dbtest_migrations order by name');
    const [a, b] = await Promise.all([openDatabase(scratch.options, testSchema, { logger }), openDatabase(scratch.options, testSchema, { logger })]);
    await a.close();
    await b.close();
    const after = await db.execute<{ name: string; executed_at: number }>('select name, executed_at from dbtest_migrations order by name');
    expect(after).toEqual(before);
  });

  it('commits the state change and its outbox row together', async () => {
    const id = randomUUID();
    const eventId = randomUUID();
    await db.transactional(async (em) => {
      em.persist(em.create(Note, { id, body: 'hello', createdAt: 1 }));
      db.outbox.enqueue(em, { id: eventId, name: 'note.created', source: 'dbtest', occurredAt: 1700000000, data: { id, tags: ['a'] } });
    });
    const notes = await db.execute('select body from dbtest_notes where id = ?', [id]);
    expect(notes).toHaveLength(1);
    const out = await db.execute<{ name: string; source: string; occurred_at: number | string; data: string; published_at: unknown }>(
      'select name, source, occurred_at, data, published_at from dbtest_outbox where id = ?',
      [eventId],
    );
    expect(out).toHaveLength(1);
    expect(out[0]!.name).toBe('note.created');
    expect(out[0]!.source).toBe('dbtest');
    expect(Number(out[0]!.occurred_at)).toBe(1700000000);
    expect(JSON.parse(out[0]!.data)).toEqual({ id, tags: ['a'] });
    expect(out[0]!.published_at).toBeNull();
  });

  it('a rolled-back transaction leaves neither the state change nor the outbox row', async () => {
    const id = randomUUID();
    const eventId = randomUUID();
    await expect(
      db.transactional(async (em) => {
        em.persist(em.create(Note, { id, body: 'nope', createdAt: 2 }));
        db.outbox.enqueue(em, { id: eventId, name: 'note.created', source: 'dbtest', occurredAt: 1, data: {} });
        await em.flush();
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await db.execute('select id from dbtest_notes where id = ?', [id])).toHaveLength(0);
    expect(await db.execute('select id from dbtest_outbox where id = ?', [eventId])).toHaveLength(0);
  });

  it('fork() gives an EntityManager that reads committed rows', async () => {
    const id = randomUUID();
    await db.transactional(async (em) => {
      em.persist(em.create(Note, { id, body: 'read me', createdAt: 3 }));
    });
    const found = await db.fork().findOne(Note, { id });
    expect(found?.body).toBe('read me');
  });
});

describe.each(['sqlite', 'postgres'] as const)('a failing migration on %s', (type) => {
  it('rejects with internal, records nothing of the failed run, and a fixed migration applies next start', async () => {
    const scratch = await createScratchDatabase(type);
    try {
      const broken = {
        ...testSchema,
        migrations: [
          ...testSchema.migrations,
          { name: '0003_broken', up: async ({ execute }: { execute: (s: string) => Promise<unknown> }) => void (await execute('create table dbtest_x (a int); select * from no_such_table')) },
        ],
      };
      await expect(openDatabase(scratch.options, broken, { logger })).rejects.toMatchObject({ code: 'internal', message: 'migration dbtest/0003_broken failed' });
      const fixed = { ...testSchema, migrations: [...testSchema.migrations, { name: '0003_broken', up: async () => {} }] };
      const db = await openDatabase(scratch.options, fixed, { logger });
      const rows = await db.execute<{ name: string }>('select name from dbtest_migrations order by name');
      expect(rows.map((r) => r.name)).toEqual(['0000_dbtest_outbox', '0000_dbtest_outbox_trace_parent', '0001_notes', '0002_notes_body_idx', '0003_broken']);
      await db.close();
    } finally {
      await scratch.drop();
    }
  });
});

describe.each(['sqlite', 'postgres', 'mariadb'] as const)('a MikroORM Migration class on %s', (type) => {
  it('runs its addSql statements in order and records it like any migration', async () => {
    const { Migration } = await import('@mikro-orm/migrations');
    class CreateTags extends Migration {
      override up(): void {
        this.addSql('create table dbtest_tags (id int primary key, label varchar(64) not null)');
        this.addSql("insert into dbtest_tags (id, label) values (1, 'first')");
      }
    }
    const scratch = await createScratchDatabase(type);
    try {
      const schema = { ...testSchema, migrations: [...testSchema.migrations, { name: '0003_tags', migration: CreateTags }] };
      const db = await openDatabase(scratch.options, schema, { logger });
      expect(await db.execute<{ label: string }>('select label from dbtest_tags')).toEqual([{ label: 'first' }]);
      await db.close();
      const again = await openDatabase(scratch.options, schema, { logger }); // not re-run: the insert would collide
      expect(await again.execute('select name from dbtest_migrations where name = ?', ['0003_tags'])).toHaveLength(1);
      await again.close();
    } finally {
      await scratch.drop();
    }
  });
});

describe('openDatabase logging', () => {
  it('writes one `service` key per line, whether or not the caller\'s logger carries one (issue 15 logs)', async () => {
    for (const bound of [true, false]) {
      const chunks: string[] = [];
      const stream = new Writable({ write(chunk: Buffer, _enc, done) { chunks.push(chunk.toString()); done(); } });
      const base = createLogger('info', stream);
      const scratch = await createScratchDatabase('sqlite');
      const db = await openDatabase(scratch.options, testSchema, { logger: bound ? base.child({ service: 'dbtest' }) : base });
      await db.close();
      await scratch.drop();
      const lines = chunks.join('').trim().split('\n');
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect({ bound, keys: line.match(/"service":/g)?.length }).toEqual({ bound, keys: 1 });
    }
  });
});
