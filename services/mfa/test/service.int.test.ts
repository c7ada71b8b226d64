/**
 * The mfa service's email-OTP flow on each SQL store (behaviour.md §3.3 step 8, §4.2–§4.4): opening a
 * challenge, the verdict on verify_otp (authn, which asks for it, issues the tokens) and resend_otp,
 * with the codes read from the `email.send` jobs in `mfa_outbox`.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createScratchDatabase, openDatabase, type Database, type DatabaseType, type ScratchDatabase } from '@gatehouse/db';
import { createLogger } from '@gatehouse/observability';
import { createCallContext, type CallContext } from '@gatehouse/rpc';
import { createMfaService, type MfaService } from '../src/service.ts';
import { OTP_ALPHABET } from '../src/domain/otp.ts';
import { createMikroMfaStore } from '../src/storage/mikro/store.ts';
import { mfaSchema } from '../src/storage/mikro/schema.ts';

const OPTIONS = {
  url: 'https://auth.example.com', appCookieSecure: true, appCookieSameSite: 'lax' as const,
  encryptionKey: 'k'.repeat(32), clientSecret: 'client-secret',
  smtpHost: '127.0.0.1', smtpPort: 2525, smtpSenderEmail: 'noreply@example.com',
};
const USER = { id: 'u-1', email: 'ada@example.com', email_verified: false, roles: ['user'], phone_number: null };

describe.each(['sqlite', 'postgres', 'mariadb'] as DatabaseType[])('mfa email OTP (%s)', (type) => {
  let scratch: ScratchDatabase;
  let db: Database;
  let now = 1_800_000_000;
  let mfa: MfaService;
  let withoutSmtp: MfaService;

  beforeAll(async () => {
    scratch = await createScratchDatabase(type);
    db = await openDatabase(scratch.options, mfaSchema, { logger: createLogger('silent') });
    const deps = { store: createMikroMfaStore(db, () => now), logger: createLogger('silent'), clock: () => now };
    mfa = createMfaService({ ...deps, options: OPTIONS });
    withoutSmtp = createMfaService({ ...deps, options: { ...OPTIONS, smtpHost: undefined } as never });
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
  });
  beforeEach(() => {
    now += 3600;
  });

  /** the codes mailed to `to`, oldest first, from the outbox rows */
  const codesFor = async (to: string): Promise<string[]> => {
    const rows = await db.execute<{ name: string; data: string }>('select name, data from mfa_outbox order by seq');
    return rows.filter((r) => r.name === 'email.send').map((r) => JSON.parse(r.data)).filter((j) => j.to === to).map((j) => j.variables.otp);
  };
  const open = async (user: Record<string, unknown> = USER, grant: Record<string, unknown> = {}): Promise<{ cookie: string; setCookies: string[] }> => {
    const ctx = createCallContext();
    await mfa.internal.handlers.OpenOtpChallenge!({
      user, channel: 'email', purpose: 'login', login_method: 'basic_auth', roles: ['user'], scope: ['openid'], state: 's1', auth_time: now, ...grant,
    }, ctx);
    return { cookie: ctx.setCookies[0]!.split(';')[0]!, setCookies: ctx.setCookies };
  };
  const withCookie = (cookie: string): CallContext => createCallContext({ headers: { cookie } });
  const verify = (cookie: string, otp: string, more: Record<string, unknown> = {}, ctx = withCookie(cookie)) =>
    mfa.internal.handlers.VerifyOtpChallenge!({ otp, email: null, phone_number: null, is_totp: null, state: null, ...more }, ctx);
  const user = (id: string) => ({ ...USER, id, email: `${id}@example.com` });

  it('opens an MFA session: an httpOnly mfa cookie for 300 s and a 6-character code mailed through the outbox', async () => {
    const u = user('open');
    const { setCookies } = await open(u);
    expect(setCookies).toHaveLength(1);
    expect(setCookies[0]).toMatch(/^mfa=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=300; HttpOnly; Secure; SameSite=Lax$/);
    const [code] = await codesFor(u.email);
    expect(code).toMatch(new RegExp(`^[${OTP_ALPHABET}]{6}$`));
    // only digests are stored: neither the code nor the cookie handle is in the mfa tables
    const stored = JSON.stringify([
      await db.execute('select * from mfa_otps'), await db.execute('select * from mfa_sessions'),
    ]);
    expect(stored).not.toContain(code);
    expect(stored).not.toContain(setCookies[0]!.split(/[=;]/)[1]);
  });

  it('verify_otp accepts the code trimmed and in any case, answers the stored grant for authn, and ends the session', async () => {
    const u = user('verify');
    const { cookie } = await open(u, { roles: ['admin'], scope: ['openid', 'offline_access'], state: 'st-9', login_method: 'basic_auth' });
    const [code] = await codesFor(u.email);
    const ctx = withCookie(cookie);
    const res = await verify(cookie, `  ${code!.toLowerCase()} `, { email: u.email.toUpperCase(), roles: ['ignored'] }, ctx);
    expect(res).toEqual({
      user_id: u.id, verified_channel: 'email', verified_contact: u.email, login_method: 'basic_auth',
      roles: ['admin'], scope: ['openid', 'offline_access'], state: 'st-9', auth_time: expect.any(Number),
    });
    expect(ctx.setCookies).toEqual(['mfa=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Lax']);
    // single use: the session and the code are gone
    await expect(verify(cookie, code!)).rejects.toMatchObject({ code: 'unauthenticated', message: 'invalid session' });
  });

  it('refuses a missing, unknown or expired session, and an identifier of another user, with 401 invalid session', async () => {
    const u = user('session');
    const { cookie } = await open(u);
    const [code] = await codesFor(u.email);
    const invalid = { code: 'unauthenticated', message: 'invalid session' };
    await expect(mfa.internal.handlers.VerifyOtpChallenge!({ otp: code }, createCallContext())).rejects.toMatchObject(invalid);
    await expect(verify('mfa=forged', code!)).rejects.toMatchObject(invalid);
    await expect(verify(cookie, code!, { email: 'someone@example.com' })).rejects.toMatchObject(invalid);
    now += 301;
    await expect(verify(cookie, code!)).rejects.toMatchObject(invalid);
  });

  it('a wrong code is 400 invalid otp; the sixth attempt in 15 minutes is 429 even with the right code, and the window clears', async () => {
    const u = user('lockout');
    const { cookie } = await open(u);
    const [code] = await codesFor(u.email);
    const wrong = code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA';
    for (let i = 0; i < 5; i++) await expect(verify(cookie, wrong)).rejects.toMatchObject({ code: 'invalid_argument', message: 'invalid otp' });
    const locked = await verify(cookie, code!).catch((e: unknown) => e);
    expect(locked).toMatchObject({ code: 'resource_exhausted', message: 'too many failed attempts, please try again later' });
    expect(Number((locked as { headers: Record<string, string> }).headers['Retry-After'])).toBeGreaterThan(0);
    // 15 minutes later the window has cleared; a new login sends a new code that works
    now += 900;
    const again = await open(u);
    const codes = await codesFor(u.email);
    await expect(verify(again.cookie, codes.at(-1)!)).resolves.toMatchObject({ user_id: u.id });
  });

  it('the code expires after 300 s even while a later session is live: 400 otp expired', async () => {
    const u = user('expiry');
    await open(u);
    now += 20;
    // a second login within 30 s keeps the live code (no second mail) but opens a new session
    const second = await open(u);
    expect(await codesFor(u.email)).toHaveLength(1);
    now += 285;
    const [code] = await codesFor(u.email);
    await expect(verify(second.cookie, code!)).rejects.toMatchObject({ code: 'invalid_argument', message: 'otp expired' });
  });

  it('gives the mfa cookie the whole 300 s when the clock turns a second during the database write', async () => {
    // every clock reading is one second later than the one before (a slow write that crosses a second)
    let t = now;
    const ticking = createMfaService({ store: createMikroMfaStore(db, () => now), logger: createLogger('silent'), clock: () => t++, options: OPTIONS });
    const opened = createCallContext();
    await ticking.internal.handlers.OpenOtpChallenge!({
      user: user('tick'), channel: 'email', purpose: 'login', login_method: 'basic_auth', roles: ['user'], scope: ['openid'], state: 's1', auth_time: now,
    }, opened);
    expect(opened.setCookies[0]).toMatch(/^mfa=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=300; HttpOnly; Secure; SameSite=Lax$/);
    t += 40;
    const resent = withCookie(opened.setCookies[0]!.split(';')[0]!);
    await ticking.public.handlers.ResendOtp!({}, resent);
    expect(resent.setCookies[0]).toMatch(/; Max-Age=300; /);
  });

  it('resend_otp: 429 within 30 s; then a new code that replaces the old one and re-arms the session', async () => {
    const u = user('resend');
    const { cookie } = await open(u);
    now += 10;
    const early = await mfa.public.handlers.ResendOtp!({}, withCookie(cookie)).catch((e: unknown) => e);
    expect(early).toMatchObject({ code: 'resource_exhausted', message: 'please wait before requesting another OTP', headers: { 'Retry-After': '20' } });
    now += 20;
    const ctx = withCookie(cookie);
    await expect(mfa.public.handlers.ResendOtp!({ email: u.email }, ctx)).resolves.toEqual({ message: 'OTP has been sent. Please check your inbox' });
    expect(ctx.setCookies).toEqual([`${cookie}; Path=/; Max-Age=300; HttpOnly; Secure; SameSite=Lax`]);
    const [first, second] = await codesFor(u.email);
    expect(second).toBeDefined();
    // the session now lives 300 s from the resend, past the first send's expiry
    now += 290;
    if (first !== second) await expect(verify(cookie, first!)).rejects.toMatchObject({ message: 'invalid otp' });
    await expect(verify(cookie, second!)).resolves.toMatchObject({ user_id: u.id });
  });

  it('is_totp without an authenticator is failed_precondition; bad otp input is invalid_argument', async () => {
    const u = user('totp');
    const { cookie } = await open(u);
    await expect(verify(cookie, '123456', { is_totp: true })).rejects.toMatchObject({ code: 'failed_precondition', message: 'authenticator app is not set up for this account' });
    await expect(verify(cookie, '   ')).rejects.toMatchObject({ code: 'invalid_argument', message: 'otp is required' });
    await expect(verify(cookie, 'x'.repeat(17))).rejects.toMatchObject({ code: 'invalid_argument', message: 'otp must be at most 16 characters' });
  });

  it('without SMTP no challenge opens and no code is resent: failed_precondition email service not enabled', async () => {
    const u = user('nosmtp');
    const ctx = createCallContext();
    await expect(withoutSmtp.internal.handlers.OpenOtpChallenge!({ user: u, channel: 'email', purpose: 'login', login_method: 'basic_auth', roles: [], scope: [], state: null, auth_time: now }, ctx))
      .rejects.toMatchObject({ code: 'failed_precondition', message: 'email service not enabled' });
    expect(ctx.setCookies).toEqual([]);
    const { cookie } = await open(u);
    now += 31;
    await expect(withoutSmtp.public.handlers.ResendOtp!({}, withCookie(cookie))).rejects.toMatchObject({ code: 'failed_precondition', message: 'email service not enabled' });
  });

  it('two concurrent completions with the right code: exactly one gets a verdict', async () => {
    const u = user('race');
    const { cookie } = await open(u);
    const [code] = await codesFor(u.email);
    const results = await Promise.allSettled([verify(cookie, code!), verify(cookie, code!)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });
});
