/**
 * @module test/e2e/outbox-at-rest
 * What the outboxes hold at rest (issue 23), on each SQL main database (all-in-one on SQLite,
 * PostgreSQL and MariaDB; split on PostgreSQL with NATS): a signup with verification, an OTP login
 * (the unverified address gets a code, behaviour.md §3.3 step 8) and a forgot → reset. A trigger
 * copies every row written to any `<service>_outbox` table as it is inserted, so the test sees
 * exactly what was stored, however quickly the relay deleted it: no row ever held a link, token or
 * code in clear, every outbox is empty within the documented delay (5 s), and every mail arrived
 * once at a real SMTP sink.
 */
import { createRequire } from 'node:module';
import type * as NodeSqlite from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startDeployment, startSmtpSink, type Deployment, type Mode, type SmtpSink } from '@gatehouse/testing';
import type { DatabaseType } from '@gatehouse/db';
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
  if (d.databaseType === 'sqlite') {
    const db = new DatabaseSync(d.databaseUrl, { timeout: 5000 });
    return {
      exec: async (sql) => void db.exec(sql),
      query: async <T>(sql: string) => db.prepare(sql).all() as unknown as T[],
      close: async () => void db.close(),
    };
  }
  const sql = await openSql(d.databaseUrl);
  return { exec: async (s) => void (await sql.query(s)), query: (s) => sql.query(s), close: () => sql.close() };
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

/** Creates `outbox_capture` and a trigger per outbox table that copies each inserted row into it. */
async function captureInserts(raw: Raw, type: DatabaseType, tables: string[]): Promise<void> {
  await raw.exec('create table outbox_capture (src varchar(64), name varchar(255), data text)');
  if (type === 'postgres') {
    await raw.exec("create function outbox_capture_fn() returns trigger as $$ begin insert into outbox_capture values (TG_TABLE_NAME, new.name, new.data); return new; end $$ language plpgsql");
  }
  for (const t of tables) {
    if (type === 'sqlite') await raw.exec(`create trigger ${t}_capture after insert on ${t} begin insert into outbox_capture values ('${t}', new.name, new.data); end`);
    else if (type === 'postgres') await raw.exec(`create trigger ${t}_capture after insert on ${t} for each row execute function outbox_capture_fn()`);
    else await raw.exec(`create trigger ${t}_capture after insert on ${t} for each row insert into outbox_capture values ('${t}', new.name, new.data)`);
  }
}

const CASES: Array<[Mode, DatabaseType]> = [['all', 'sqlite'], ['all', 'postgres'], ['all', 'mariadb'], ['split', 'postgres']];

describe.each(CASES)('the outbox at rest (%s on %s)', (mode, database) => {
  let sink: SmtpSink;
  let d: Deployment;
  let raw: Raw;
  let tables: string[];

  beforeAll(async () => {
    sink = await startSmtpSink();
    d = await startDeployment(mode, { database, flags: emailFlags(sink), readyTimeoutMs: 90_000 });
    raw = await openRaw(d);
    tables = await outboxTables(raw, database);
    await captureInserts(raw, database, tables);
  }, 150_000);
  afterAll(async () => {
    await raw?.close();
    await d?.stop();
    await sink?.close();
  });

  it('signup with verification, an OTP login and forgot → reset: no outbox row ever held a link or code in clear, every outbox empties, every mail arrives once', async () => {
    expect(tables).toEqual(expect.arrayContaining(['authn_outbox', 'mfa_outbox']));
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
      left = [];
      for (const t of tables) {
        const [row] = await raw.query<{ n: number | string }>(`select count(*) as n from ${t}`);
        if (Number(row!.n) > 0) left.push({ table: t, n: Number(row!.n) });
      }
      if (left.length === 0 || Date.now() > deadline) break;
      await sleep(100);
    }
    expect(left).toEqual([]);

    // what was stored: the three mail jobs, each sealed; no link, token or code anywhere in any outbox row
    const stored = await raw.query<{ src: string; name: string; data: string }>('select src, name, data from outbox_capture');
    const mails = stored.filter((r) => r.name === 'email.send').map((r) => ({ src: r.src, data: JSON.parse(r.data) as Record<string, unknown> }));
    expect(mails.filter((m) => (m.data.to as string) === email).map((m) => m.src).sort()).toEqual(['authn_outbox', 'authn_outbox', 'mfa_outbox']);
    for (const m of mails) {
      expect(m.data.sealed_variables).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
      expect(m.data.variables).toEqual({});
    }
    const everything = stored.map((r) => r.data).join('\n');
    for (const secret of [signupToken, resetToken, code]) expect(everything).not.toContain(secret);
    expect(everything).not.toMatch(/token=|verify_email\?/);

    // each mail arrived once: nothing more turns up after the relay and worker settled
    await sleep(1500);
    expect(sink.to(email).map((m) => m.subject).sort()).toEqual(['OTP for your multi factor authentication', 'Please verify your email', 'Reset Password'].sort());
  }, 120_000);
});
