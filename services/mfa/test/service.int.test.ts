/**
 * The mfa service on each SQL store, for what only a real database shows (issue 14 §3): the outbox
 * row of a code is written in the transaction of its MFA session and stored code (ARCHITECTURE §4),
 * and of two completions racing on separate connections exactly one gets the verdict (behaviour.md
 * §4.2 single use). The flow's rules are unit-tested on the memory store beside the code (src/**).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createScratchDatabase, openDatabase, type Database, type DatabaseType, type ScratchDatabase } from '@gatehouse/db';
import { createLogger } from '@gatehouse/observability';
import { createCallContext, createInProcessClient, typedClient } from '@gatehouse/rpc';
import { jobSealKey } from '@gatehouse/crypto';
import { OPTIONS, mfaCookieHeader, openOtpMail, openRequest, user, withCookie } from '../src/fixture.ts';
import { createMfaService } from '../src/service.ts';
import { createMikroMfaStore } from '../src/storage/mikro/store.ts';
import { mfaSchema } from '../src/storage/mikro/schema.ts';

describe.each(['sqlite', 'postgres', 'mariadb'] as DatabaseType[])('mfa email OTP (%s)', (type) => {
  let scratch: ScratchDatabase;
  let db: Database;
  const now = 1_800_000_000;
  let mfa: ReturnType<typeof internalClient>;

  const internalClient = (database: Database) => {
    const { internal } = createMfaService({ options: OPTIONS, store: createMikroMfaStore(database, () => now), authenticator: null, logger: createLogger('silent'), clock: () => now });
    return typedClient(internal.desc, createInProcessClient(internal.desc, internal.handlers));
  };

  beforeAll(async () => {
    scratch = await createScratchDatabase(type);
    db = await openDatabase(scratch.options, mfaSchema, { logger: createLogger('silent') });
    mfa = internalClient(db);
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
  });

  /** the codes mailed to `to`, oldest first, from the outbox rows */
  const codesFor = async (to: string): Promise<string[]> => {
    const rows = await db.execute<{ name: string; data: string }>('select name, data from mfa_outbox order by seq');
    const key = jobSealKey(OPTIONS.encryptionKey, OPTIONS.clientSecret);
    // issue 23: the rows hold the code sealed; the worker's view opens it
    return rows.filter((r) => r.name === 'email.send').map((r) => openOtpMail(key, JSON.parse(r.data))).filter((j) => j.to === to).map((j) => j.variables.otp);
  };
  const count = async (table: string, where: string, param: string): Promise<number> =>
    (await db.execute(`select * from ${table} where ${where} = ?`, [param])).length;
  /** opens a login challenge for `u`; the Cookie header carrying its `mfa` cookie */
  const open = async (u: ReturnType<typeof user>): Promise<string> => {
    const ctx = createCallContext();
    await mfa.OpenOtpChallenge(openRequest(u), ctx);
    return mfaCookieHeader(ctx.setCookies[0]!);
  };

  it('writes the email.send job to mfa_outbox in the transaction of the MFA session and the code: all three, or none', async () => {
    const u = user('outbox');
    // the outbox insert fails at commit: the session and the code written before it roll back
    await db.execute('alter table mfa_outbox rename to mfa_outbox_away');
    try {
      await expect(open(u)).rejects.toThrow();
    } finally {
      await db.execute('alter table mfa_outbox_away rename to mfa_outbox');
    }
    expect(await count('mfa_sessions', 'user_id', u.id)).toBe(0);
    expect(await count('mfa_otps', 'user_id', u.id)).toBe(0);
    expect(await codesFor(u.email!)).toEqual([]);

    const cookie = await open(u);
    expect(await count('mfa_sessions', 'user_id', u.id)).toBe(1);
    expect(await count('mfa_otps', 'user_id', u.id)).toBe(1);
    const [code] = await codesFor(u.email!);
    // the mailed code is the stored one
    await expect(mfa.VerifyOtpChallenge({ otp: code }, withCookie(cookie))).resolves.toMatchObject({ user_id: u.id, verified_contact: u.email });
  });

  it('two concurrent completions with the right code: exactly one gets a verdict, the other is refused', async () => {
    const u = user('race');
    const cookie = await open(u);
    const [code] = await codesFor(u.email!);
    const results = await Promise.allSettled([mfa.VerifyOtpChallenge({ otp: code }, withCookie(cookie)), mfa.VerifyOtpChallenge({ otp: code }, withCookie(cookie))]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    // the loser finds the session gone (401 invalid session), or read it just before the winner
    // committed and then finds its code gone (404 OTP not found)
    const loser = results.find((r) => r.status === 'rejected')!.reason as { code: string; message: string };
    expect([{ code: 'unauthenticated', message: 'invalid session' }, { code: 'not_found', message: 'OTP not found' }]).toContainEqual({ code: loser.code, message: loser.message });
    expect(await count('mfa_sessions', 'user_id', u.id)).toBe(0);
    expect(await count('mfa_otps', 'user_id', u.id)).toBe(0);
  });
});
