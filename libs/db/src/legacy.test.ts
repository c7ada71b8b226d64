/**
 * @module @gatehouse/db/legacy.test
 * Spec §9: stale UNIQUE constraints/indexes on users.email and users.phone_number, under
 * whatever names 1.x left, are dropped; the primary key, composite and non-unique indexes stay.
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { createLogger } from '@gatehouse/observability';
import { createScratchDatabase, dropLegacyUniqueIndexes, openDatabase } from './index.ts';
import type { Database, DatabaseType, ScratchDatabase } from './index.ts';
import { stripUniqueFromCreateTable } from './legacy-sqlite.ts';

const logger = createLogger('silent');
const schema = { service: 'legacytest', entities: [], migrations: [] };

const setup: Record<Exclude<DatabaseType, 'mongodb'>, string[]> = {
  postgres: [
    `create table users (id varchar(36) primary key, email varchar(255), phone_number varchar(64), nickname varchar(64),
       constraint "Weird Name_uq" unique (email), constraint users_email_phone_pair unique (email, phone_number))`,
    // a separate statement: CREATE TABLE would fold two identical UNIQUE constraints into one
    `alter table users add constraint authorizer_users_email_key unique (email)`,
    `create unique index users_phone_plain on users (phone_number)`,
    `create index users_email_lookup on users (email)`,
    `create unique index users_nickname_uq on users (nickname)`,
  ],
  mysql: [
    'create table users (id varchar(36) primary key, email varchar(255), phone_number varchar(64), nickname varchar(64), ' +
      'constraint `Weird Name_uq` unique (email), unique key authorizer_users_email_key (email), ' +
      'unique key users_email_phone_pair (email, phone_number))',
    'create unique index users_phone_plain on users (phone_number)',
    'create index users_email_lookup on users (email)',
    'create unique index users_nickname_uq on users (nickname)',
  ],
  mariadb: [],
  sqlite: [
    `create table users (id text primary key, email text unique, phone_number text constraint "Weird Name_uq" unique on conflict abort,
       nickname text unique, unique (email, phone_number))`,
    `create unique index authorizer_users_email_key on users (email)`,
    `create index users_email_lookup on users (email)`,
    `create trigger users_touch after insert on users begin select 1; end`,
  ],
};
setup.mariadb = setup.mysql;

/** Unique, non-primary indexes on `users` as "name:col1,col2" (from each catalog). */
async function uniqueIndexes(db: Database): Promise<string[]> {
  let rows: { name: string; cols: string }[];
  if (db.type === 'postgres') {
    rows = await db.execute(
      `select i.relname as name, string_agg(a.attname, ',' order by a.attnum) as cols from pg_index x
         join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
         join pg_attribute a on a.attrelid = t.oid and a.attnum = any(x.indkey)
       where t.relname = 'users' and t.relnamespace = current_schema()::regnamespace and x.indisunique and not x.indisprimary
       group by i.relname`,
    );
  } else if (db.type === 'sqlite') {
    const list = await db.execute<{ name: string; unique: number; origin: string }>(`select * from pragma_index_list('users')`);
    rows = [];
    for (const ix of list.filter((l) => Number(l.unique) === 1 && l.origin !== 'pk')) {
      const cols = await db.execute<{ name: string }>(`select name from pragma_index_info(?) order by seqno`, [ix.name]);
      rows.push({ name: ix.name, cols: cols.map((c) => c.name).sort().join(',') });
    }
  } else {
    rows = await db.execute(
      `select index_name as name, group_concat(column_name order by column_name) as cols from information_schema.statistics
       where table_schema = database() and table_name = 'users' and non_unique = 0 and index_name <> 'PRIMARY' group by index_name`,
    );
  }
  return rows.map((r) => `${r.name}:${r.cols}`).sort();
}

describe.each(['postgres', 'mariadb', 'mysql', 'sqlite'] as const)('dropLegacyUniqueIndexes on %s', (type) => {
  let scratch: ScratchDatabase;
  let db: Database;
  beforeAll(async () => {
    scratch = await createScratchDatabase(type);
    db = await openDatabase(scratch.options, schema, { logger });
    for (const sql of setup[type]) await db.execute(sql);
    await db.execute(`insert into users (id, email, phone_number, nickname) values ('u1', 'a@example.com', '+100', 'n1')`);
  });
  afterAll(async () => {
    await db.close();
    await scratch.drop();
  });

  it('drops every single-column unique constraint/index on email and phone_number, whatever its name', async () => {
    const messages: unknown[] = [];
    const spy = { ...logger, info: (o: unknown, m?: string) => void messages.push(m ?? o), child: () => spy } as unknown as typeof logger;
    const dropped = await dropLegacyUniqueIndexes(db, 'users', ['email', 'phone_number'], spy);
    const left = await uniqueIndexes(db);
    expect(left.some((l) => l.endsWith(':email') || l.endsWith(':phone_number'))).toBe(false);
    expect(left.some((l) => l.endsWith(':email,phone_number'))).toBe(true); // composite stays
    expect(left.some((l) => l.endsWith(':nickname'))).toBe(true); // other columns untouched
    if (type !== 'sqlite') expect(dropped.sort()).toEqual(['Weird Name_uq', 'authorizer_users_email_key', 'users_phone_plain'].sort());
    else expect(dropped).toHaveLength(3); // authorizer_users_email_key + two sqlite_autoindex_users_* (rebuild)
    expect(messages).toHaveLength(dropped.length);
  });

  it('now accepts a duplicate email and phone number at the database level, and kept the data', async () => {
    await db.execute(`insert into users (id, email, phone_number, nickname) values ('u2', 'a@example.com', '+200', 'n2')`);
    await db.execute(`insert into users (id, email, phone_number, nickname) values ('u3', 'c@example.com', '+100', 'n3')`);
    const rows = await db.execute<{ id: string }>(`select id from users where email = 'a@example.com' or phone_number = '+100' order by id`);
    expect(rows.map((r) => r.id)).toEqual(['u1', 'u2', 'u3']);
    if (type === 'sqlite') {
      // the rebuild recreated the table's other index and its trigger
      const objs = await db.execute<{ name: string }>(`select name from sqlite_master where tbl_name = 'users' and type in ('index', 'trigger') and sql is not null order by name`);
      expect(objs.map((o) => o.name)).toEqual(['users_email_lookup', 'users_touch']);
    }
    await expect(db.execute(`insert into users (id, email, phone_number, nickname) values ('u1', 'b@example.com', '+2', 'n4')`)).rejects.toThrow();
  });

  it('is a no-op the second time and for a missing table', async () => {
    expect(await dropLegacyUniqueIndexes(db, 'users', ['email', 'phone_number'], logger)).toEqual([]);
    expect(await dropLegacyUniqueIndexes(db, 'no_such_table', ['email'], logger)).toEqual([]);
  });
});

describe('stripUniqueFromCreateTable', () => {
  it('removes inline, named and table-level single-column UNIQUE on the given columns only', () => {
    const sql = 'CREATE TABLE "users" ("id" TEXT PRIMARY KEY, "email" TEXT NOT NULL UNIQUE, [phone_number] TEXT CONSTRAINT "x y" UNIQUE, nick TEXT UNIQUE, CHECK (length(email) > 0), UNIQUE ("email"), UNIQUE (email, nick)) STRICT';
    const { body, tail } = stripUniqueFromCreateTable(sql, ['email', 'phone_number']);
    expect(body).toBe('"id" TEXT PRIMARY KEY, "email" TEXT NOT NULL, [phone_number] TEXT, nick TEXT UNIQUE, CHECK (length(email) > 0), UNIQUE (email, nick)');
    expect(tail).toBe(' STRICT');
  });
});
