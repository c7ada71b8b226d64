/**
 * @module test/e2e/legacy-index
 * Spec §9: a database from 1.x may carry UNIQUE constraints or unique indexes on `email` and
 * `phone_number` under any name; current builds drop them at startup under their real names, and
 * uniqueness is enforced by the application (409 `already_exists`, behaviour.md §0.2, §3.5).
 */
import { describe, it, expect, beforeAll, afterAll, jest } from '@jest/globals';
import { createScratchDatabase, type ScratchDatabase } from '@gatehouse/db';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { rest } from '../support/surfaces.ts';
import { PASSWORD, expectError, expectOk, freshEmail } from '../support/scenario.ts';
import { openSql, type SqlClient } from '../support/sql.ts';

jest.setTimeout(90_000);

interface IndexRow { name: string; col: string; unique: boolean }

/** Single-column indexes (unique constraints included: both engines back them by an index) on the two columns. */
async function indexesOn(sql: SqlClient, type: 'postgres' | 'mariadb'): Promise<IndexRow[]> {
  const rows = type === 'postgres'
    ? await sql.query<{ name: string; col: string; uniq: boolean }>(
      `select i.relname as name, a.attname as col, x.indisunique as uniq from pg_index x
         join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
         join pg_attribute a on a.attrelid = t.oid and a.attnum = x.indkey[0]
       where t.relname = 'authn_users' and t.relnamespace = current_schema()::regnamespace
         and x.indnatts = 1 and a.attname in ('email', 'phone_number')`)
    : await sql.query<{ name: string; col: string; uniq: number }>(
      `select index_name as name, column_name as col, (non_unique = 0) as uniq from information_schema.statistics
       where table_schema = database() and table_name = 'authn_users' and column_name in ('email', 'phone_number')
         and index_name not in (select index_name from information_schema.statistics
           where table_schema = database() and table_name = 'authn_users' and seq_in_index > 1)`);
  return rows.map((r) => ({ name: r.name, col: r.col, unique: Boolean(r.uniq) })).sort((a, b) => a.name.localeCompare(b.name));
}

const PLANT: Record<'postgres' | 'mariadb', string[]> = {
  postgres: [
    'alter table authn_users add constraint "Weird Email_uq" unique (email)',
    'alter table authn_users add constraint authorizer_users_email_key unique (email)',
    'create unique index "users phone LEGACY" on authn_users (phone_number)',
    'alter table authn_users add constraint authorizer_users_phone_number_key unique (phone_number)',
  ],
  mariadb: [
    'alter table authn_users add constraint `Weird Email_uq` unique (email)',
    'create unique index authorizer_users_email_key on authn_users (email)',
    'create unique index `users phone LEGACY` on authn_users (phone_number)',
    'alter table authn_users add unique key authorizer_users_phone_number_key (phone_number)',
  ],
};
const PLANTED = ['Weird Email_uq', 'authorizer_users_email_key', 'users phone LEGACY', 'authorizer_users_phone_number_key'];

describe.each(['postgres', 'mariadb'] as const)('legacy unique indexes on %s', (type) => {
  let scratch: ScratchDatabase;
  let d: Deployment | undefined;
  let sql: SqlClient | undefined;
  const start = (): Promise<Deployment> =>
    startDeployment('all', { database: type, readyTimeoutMs: 60_000, flags: [`--database-url=${scratch.options.url}`] });

  beforeAll(async () => {
    scratch = await createScratchDatabase(type);
    // first start: migrations create authn_users
    const first = await start();
    await first.stop();
    sql = await openSql(scratch.options.url!);
    for (const stmt of PLANT[type]) await sql.query(stmt);
  }, 180_000);
  afterAll(async () => {
    await sql?.close();
    await d?.stop();
    await scratch?.drop();
  });

  it('the planted constraints and indexes exist before the restart', async () => {
    const planted = (await indexesOn(sql!, type)).filter((r) => r.unique).map((r) => r.name);
    expect(planted.sort()).toEqual([...PLANTED].sort());
  });

  it('startup drops every single-column unique index on email and phone_number, and keeps the plain ones', async () => {
    d = await start();
    const after = await indexesOn(sql!, type);
    expect(after.filter((r) => r.unique)).toEqual([]);
    // the application's own non-unique lookup indexes stay
    expect(after.map((r) => r.name)).toEqual(expect.arrayContaining(['authn_users_email_idx', 'authn_users_phone_number_idx']));
    if (type === 'postgres') {
      const cons = await sql!.query("select conname from pg_constraint c join pg_class t on t.oid = c.conrelid where t.relname = 'authn_users' and c.contype = 'u'");
      expect(cons).toEqual([]);
    }
  });

  it('the application still refuses a duplicate email or phone number', async () => {
    const a = freshEmail('legacy-a');
    const b = freshEmail('legacy-b');
    const phoneA = `+1555${Date.now() % 10_000_000}`.padEnd(12, '0');
    expectOk(await rest(d!, { op: 'signup', args: { email: a, phone_number: phoneA, password: PASSWORD, confirm_password: PASSWORD } }));
    const signupB = expectOk(await rest(d!, { op: 'signup', args: { email: b, password: PASSWORD, confirm_password: PASSWORD } }));
    const token = signupB.access_token as string;
    expectError(await rest(d!, { op: 'update_profile', args: { email: a }, creds: { bearer: token } }), 'already_exists', 'user with given email already exists');
    expectError(await rest(d!, { op: 'update_profile', args: { email: ` ${a.toUpperCase()}` }, creds: { bearer: token } }), 'already_exists', 'user with given email already exists');
    expectError(await rest(d!, { op: 'update_profile', args: { phone_number: phoneA }, creds: { bearer: token } }), 'already_exists', 'user with given phone number already exists');
    expectError(await rest(d!, { op: 'signup', args: { email: a, password: PASSWORD, confirm_password: PASSWORD } }), 'invalid_argument', 'user with given email already exists');
    const rows = await sql!.query<{ n: number | string }>(type === 'postgres'
      ? 'select count(*) as n from authn_users where email = $1' : 'select count(*) as n from authn_users where email = ?', [a]);
    expect(Number(rows[0]!.n)).toBe(1);
  });
});
