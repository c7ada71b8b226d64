/**
 * @module test/e2e/outbox-at-rest
 * What the outboxes hold at rest (issue 23), on each main database (all-in-one on SQLite,
 * PostgreSQL, MariaDB and MongoDB (FerretDB v1); split on PostgreSQL with NATS): a signup with
 * verification, an OTP login (the unverified address gets a code, behaviour.md §3.3 step 8) and a
 * forgot → reset. A trigger copies every row written to any `<service>_outbox` table as it is
 * inserted (MongoDB: every document version that carries an `_outbox` map, from FerretDB's SQLite
 * tables), so the test sees exactly what was stored, however quickly the relay deleted it: no row
 * ever held a link, token or code in clear, every outbox is empty within the documented delay (5 s),
 * and every mail arrived once at a real SMTP sink.
 */
import { createRequire } from 'node:module';
import type * as NodeSqlite from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startDeployment, startSmtpSink, type Deployment, type Mode, type SmtpSink } from '@gatehouse/testing';
import path from 'node:path';
import type { MongoEntityManager } from '@mikro-orm/mongodb';
import { openDatabase, type DatabaseType } from '@gatehouse/db';
import { createLogger } from '@gatehouse/observability';
import { authnSchema } from '../../services/authn/src/storage/mikro/index.ts';
import { mfaSchema } from '../../services/mfa/src/storage/mikro/schema.ts';
import { openSql } from '../support/sql.ts';
import { NEW_PASSWORD, PASSWORD, address, cookieHeader, emailFlags, post, signup, sleep } from './email-support.ts';

// node:sqlite through Node's own require: jest's resolver does not know the module yet
const { DatabaseSync } = createRequire(import.meta.url)('node:sqlite') as typeof NodeSqlite;

/** How long a committed outbox row may stay (README "Outbox"): the relay polls every 500 ms. */
const OUTBOX_DELAY_MS = 5_000;

interface Raw {
  exec(sql: string): Promise<void>;
  query<T>(sql: string): Promise<T[]>;
  close(): Promise<void>;
}

async function openRaw(d: Deployment): Promise<Raw> {
  if (d.databaseType === 'sqlite' || d.databaseType === 'mongodb') {
    // MongoDB: FerretDB's own SQLite file of the database, read behind the server's back
    const file = d.databaseType === 'sqlite' ? d.databaseUrl : path.join(d.databaseFiles!, `${new URL(d.databaseUrl).pathname.slice(1)}.sqlite`);
    const db = new DatabaseSync(file, { timeout: 5000 });
    return {
      exec: async (sql) => void db.exec(sql),
      query: async <T>(sql: string) => db.prepare(sql).all() as unknown as T[],
      close: async () => void db.close(),
    };
  }
  const sql = await openSql(d.databaseUrl);
  return { exec: async (s) => void (await sql.query(s)), query: (s) => sql.query(s), close: () => sql.close() };
}

/** One event as it was stored: the outbox it went to (`<service>_outbox`), its name and its `data` JSON text. */
interface StoredEvent {
  src: string;
  name: string;
  data: string;
}

/** What the test reads of a database's outboxes. */
interface OutboxView {
  /** the outboxes: SQL tables, or on MongoDB the `<service>_outbox` collections */
  readonly outboxes: string[];
  /** the outboxes (or MongoDB documents) that still hold pending events */
  left(): Promise<Array<{ table: string; n: number }>>;
  /** every event ever written, however quickly the relay removed it */
  stored(): Promise<StoredEvent[]>;
  /** everything stored next to the events (MongoDB: the whole documents that carried them), as text */
  around(): Promise<string>;
}

/** The outbox tables of the deployment's database. */
async function outboxTables(raw: Raw, type: DatabaseType): Promise<string[]> {
  const q = type === 'sqlite'
    ? "select name as t from sqlite_master where type = 'table' and name like '%\\_outbox' escape '\\'"
    : type === 'postgres'
      ? "select table_name as t from information_schema.tables where table_schema = current_schema() and table_name like '%\\_outbox'"
      : "select table_name as t from information_schema.tables where table_schema = database() and table_name like '%\\_outbox'";
  return (await raw.query<{ t: string }>(q)).map((r) => r.t).sort();
}

/** SQL: a trigger per outbox table copies each inserted row into `outbox_capture`. */
async function sqlView(raw: Raw, type: DatabaseType): Promise<OutboxView> {
  const tables = await outboxTables(raw, type);
  await raw.exec('create table outbox_capture (src varchar(64), name varchar(255), data text)');
  if (type === 'postgres') {
    await raw.exec("create function outbox_capture_fn() returns trigger as $$ begin insert into outbox_capture values (TG_TABLE_NAME, new.name, new.data); return new; end $$ language plpgsql");
  }
  for (const t of tables) {
    if (type === 'sqlite') await raw.exec(`create trigger ${t}_capture after insert on ${t} begin insert into outbox_capture values ('${t}', new.name, new.data); end`);
    else if (type === 'postgres') await raw.exec(`create trigger ${t}_capture after insert on ${t} for each row execute function outbox_capture_fn()`);
    else await raw.exec(`create trigger ${t}_capture after insert on ${t} for each row insert into outbox_capture values ('${t}', new.name, new.data)`);
  }
  const stored = (): Promise<StoredEvent[]> => raw.query<StoredEvent>('select src, name, data from outbox_capture');
  return {
    outboxes: tables,
    async left() {
      const left: Array<{ table: string; n: number }> = [];
      for (const t of tables) {
        const [row] = await raw.query<{ n: number | string }>(`select count(*) as n from ${t}`);
        if (Number(row!.n) > 0) left.push({ table: t, n: Number(row!.n) });
      }
      return left;
    },
    stored,
    around: async () => (await stored()).map((r) => r.data).join('\n'),
  };
}

/**
 * MongoDB (FerretDB v1 on SQLite): the events ride in the `_outbox` map of the documents a unit of
 * work writes (libs/db single-document pattern). Every collection of authn and mfa is created first
 * (MongoDB creates them on first use), then an insert and an update trigger on each collection's
 * FerretDB table copies every document version that carries an `_outbox` into `outbox_capture`.
 */
async function mongoView(raw: Raw, d: Deployment): Promise<OutboxView> {
  const services = ['authn', 'mfa'];
  const names = [...authnSchema.entities, ...mfaSchema.entities].map((e) => e.meta.collection!).concat(services.map((s) => `${s}_outbox`));
  const client = await openDatabase({ type: 'mongodb', url: d.databaseUrl }, { service: 'e2e_capture', entities: [], migrations: [] }, { logger: createLogger('silent') });
  try {
    const mongo = (client.fork() as unknown as MongoEntityManager).getConnection().getDb();
    const existing = new Set((await mongo.listCollections().toArray()).map((c) => c.name));
    for (const n of names) if (!existing.has(n)) await mongo.createCollection(n);
  } finally {
    await client.close();
  }
  const tables = await raw.query<{ name: string; t: string }>('select name, table_name as t from _ferretdb_collections');
  const ours = tables.filter((t) => names.includes(t.name));
  await raw.exec('create table outbox_capture (src text, doc text)');
  const outboxOf = (collection: string): string => `${collection.split('_')[0]}_outbox`;
  for (const { name, t } of ours) {
    for (const op of ['insert', 'update']) {
      await raw.exec(`create trigger "${t}_capture_${op}" after ${op} on "${t}" when json_extract(new._ferretdb_sjson, '$._outbox') is not null ` +
        `begin insert into outbox_capture values ('${outboxOf(name)}', new._ferretdb_sjson); end`);
    }
  }
  return {
    outboxes: services.map((s) => `${s}_outbox`),
    async left() {
      const left: Array<{ table: string; n: number }> = [];
      for (const { name, t } of ours) {
        const [row] = await raw.query<{ n: number }>(`select count(*) as n from "${t}" where json_extract(_ferretdb_sjson, '$._outbox') is not null`);
        if (Number(row!.n) > 0) left.push({ table: name, n: Number(row!.n) });
      }
      return left;
    },
    async stored() {
      // one event per envelope id, however many document versions carried it before the relay removed it
      const byId = new Map<string, StoredEvent>();
      for (const r of await raw.query<{ src: string; doc: string }>('select src, doc from outbox_capture')) {
        const entries = (JSON.parse(r.doc) as { _outbox: Record<string, { name: string; data: string }> })._outbox;
        for (const [id, e] of Object.entries(entries)) if (id !== '$s') byId.set(id, { src: r.src, name: e.name, data: e.data });
      }
      return [...byId.values()];
    },
    around: async () => (await raw.query<{ doc: string }>('select doc from outbox_capture')).map((r) => r.doc).join('\n'),
  };
}

const CASES: Array<[Mode, DatabaseType]> = [['all', 'sqlite'], ['all', 'postgres'], ['all', 'mariadb'], ['split', 'postgres'], ['all', 'mongodb']];

describe.each(CASES)('the outbox at rest (%s on %s)', (mode, database) => {
  let sink: SmtpSink;
  let d: Deployment;
  let raw: Raw;
  let view: OutboxView;

  beforeAll(async () => {
    sink = await startSmtpSink();
    d = await startDeployment(mode, { database, flags: emailFlags(sink), readyTimeoutMs: 90_000 });
    raw = await openRaw(d);
    view = database === 'mongodb' ? await mongoView(raw, d) : await sqlView(raw, database);
  }, 150_000);
  afterAll(async () => {
    await raw?.close();
    await d?.stop();
    await sink?.close();
  });

  it('signup with verification, an OTP login and forgot → reset: no outbox row ever held a link or code in clear, every outbox empties, every mail arrives once', async () => {
    expect(view.outboxes).toEqual(expect.arrayContaining(['authn_outbox', 'mfa_outbox']));
    const email = address('at-rest');
    expect((await signup(d.url, email)).status).toBe(200);
    const link = sink.tokenLink(await sink.waitForMail(email));
    const signupToken = link.searchParams.get('token')!;

    // the address is unverified: the password login mails a code instead of issuing tokens (§3.3 step 8)
    const login = await post(d.url, '/v1/login', { email, password: PASSWORD });
    expect(login.body).toMatchObject({ should_show_email_otp_screen: true, access_token: null });
    await sink.waitForMail(email, { count: 2 });
    const otpMail = sink.to(email).find((m) => m.subject === 'OTP for your multi factor authentication')!;
    const code = sink.otpOf(otpMail);
    const verified = await post(d.url, '/v1/verify_otp', { otp: code, email }, cookieHeader(login.cookies));
    expect(verified.body).toMatchObject({ message: 'OTP verified successfully.', user: { email, email_verified: true } });

    expect((await post(d.url, '/v1/forgot_password', { email })).status).toBe(200);
    const resetToken = sink.tokenLink(await sink.waitForMail(email, { count: 3 })).searchParams.get('token')!;
    expect((await post(d.url, '/v1/reset_password', { token: resetToken, password: NEW_PASSWORD, confirm_password: NEW_PASSWORD })).body)
      .toEqual({ message: 'Password updated successfully.' });

    // every outbox is empty within the documented delay
    const deadline = Date.now() + OUTBOX_DELAY_MS;
    let left: Array<{ table: string; n: number }> = [];
    for (;;) {
      left = await view.left();
      if (left.length === 0 || Date.now() > deadline) break;
      await sleep(100);
    }
    expect(left).toEqual([]);

    // what was stored: the three mail jobs, each sealed; no link, token or code anywhere in any outbox row
    const stored = await view.stored();
    // the user.* events went the same way (a row is removed only once the bus acknowledged it)
    expect(stored.filter((r) => r.src === 'authn_outbox' && r.name.startsWith('user.')).map((r) => r.name).sort())
      .toEqual(expect.arrayContaining(['user.created', 'user.login', 'user.signup']));
    const mails = stored.filter((r) => r.name === 'email.send').map((r) => ({ src: r.src, data: JSON.parse(r.data) as Record<string, unknown> }));
    expect(mails.filter((m) => (m.data.to as string) === email).map((m) => m.src).sort()).toEqual(['authn_outbox', 'authn_outbox', 'mfa_outbox']);
    for (const m of mails) {
      expect(m.data.sealed_variables).toMatch(/^v2\.[A-Za-z0-9_-]{11}\.[A-Za-z0-9_-]+$/);
      expect(m.data.variables).toEqual({});
    }
    const everything = await view.around();
    for (const secret of [signupToken, resetToken, code]) expect(everything).not.toContain(secret);
    expect(everything).not.toMatch(/token=|verify_email\?/);

    // each mail arrived once: nothing more turns up after the relay and worker settled
    await sleep(1500);
    expect(sink.to(email).map((m) => m.subject).sort()).toEqual(['OTP for your multi factor authentication', 'Please verify your email', 'Reset Password'].sort());
  }, 120_000);
});
