/**
 * @module test/e2e/mfa-gate
 * The MFA gate end to end in both modes (behaviour.md §4.1-§4.5, §4.7, §9): every row G0-G7 with its
 * exact response, offer vs enforce, skip, lock, TOTP (codes from otplib with the secret the server
 * returned, at the real clock) with its replay guard, recovery codes and lockout, email OTP enrolment
 * and challenge through a real SMTP sink, the gated verify_email link, and bad input; on REST,
 * GraphQL and native gRPC.
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { decodeJwt } from 'jose';
import { generate } from 'otplib';
import { createCallContext, createGrpcClient, serviceDescriptor, type CallContext } from '@gatehouse/rpc';
import { startDeployment, startSmtpSink, type Deployment, type Mode, type SmtpSink } from '@gatehouse/testing';
import { PASSWORD, address, bearer, cookieHeader, get, post, signup, sleep, type Reply } from './email-support.ts';

const INVALID_SESSION = { code: 'unauthenticated', message: 'invalid session' };
const LOCKED = "your account's multi-factor authentication is locked; contact your administrator to regain access";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const NOTHING_ISSUED = { access_token: null, id_token: null, refresh_token: null, expires_in: null, user: null };

/** SMTP configured (email OTP usable), magic links on, email verification off. */
const smtpFlags = (sink: SmtpSink): string[] => [
  `--smtp-host=${sink.host}`, `--smtp-port=${sink.port}`, '--smtp-sender-email=noreply@gatehouse.test',
  '--enable-magic-link-login', '--skip-tls-verification',
];

/** The 6-digit TOTP code of `secret` now (RFC 6238, SHA-1, 30 s), as an authenticator app shows it. */
const totpNow = (secret: string): Promise<string> => generate({ secret });

/** Width and height of a PNG from its IHDR chunk. */
function pngSize(base64: string): { width: number; height: number; signature: string } {
  const png = Buffer.from(base64, 'base64');
  return { signature: png.subarray(0, 8).toString('hex'), width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/** A challenge (G2-G4): `message`, every screen and offer false but `screens`, nothing issued, no TOTP secret. */
const challenge = (message: string, screens: Record<string, boolean>): Record<string, unknown> => ({
  message, ...NOTHING_ISSUED,
  should_show_email_otp_screen: false, should_show_mobile_otp_screen: false, should_show_totp_screen: false,
  should_offer_webauthn_mfa_verify: false, should_offer_webauthn_mfa_setup: false, should_offer_email_otp_mfa_setup: false,
  should_offer_sms_otp_mfa_setup: false, should_offer_mfa_setup: false,
  authenticator_secret: null, authenticator_scanner_image: null, authenticator_recovery_codes: null,
  ...screens,
});

/** The offer of G5/G7 with TOTP, passkeys and email OTP (SMTP) usable. */
const OFFER = {
  message: 'Proceed to mfa setup', ...NOTHING_ISSUED,
  should_show_email_otp_screen: false, should_show_mobile_otp_screen: false, should_show_totp_screen: true,
  should_offer_webauthn_mfa_verify: false, should_offer_webauthn_mfa_setup: true, should_offer_email_otp_mfa_setup: true,
  should_offer_sms_otp_mfa_setup: false, should_offer_mfa_setup: false,
  authenticator_secret: expect.stringMatching(/^[A-Z2-7]{32}$/), authenticator_scanner_image: expect.any(String),
  authenticator_recovery_codes: expect.arrayContaining([expect.stringMatching(UUID)]),
};

describe.each(['all', 'split'] as Mode[])('the MFA gate (%s)', (mode) => {
  let sink: SmtpSink;
  let d: Deployment;
  let enforced: Deployment;

  beforeAll(async () => {
    sink = await startSmtpSink();
    d = await startDeployment(mode, { mfa: true, flags: smtpFlags(sink) });
    enforced = await startDeployment(mode, { mfa: true, flags: [...smtpFlags(sink), '--enforce-mfa'] });
  }, 240_000);
  afterAll(async () => {
    await d?.stop();
    await enforced?.stop();
    await sink?.close();
  });

  /** Signs `email` up on `dep`: the G7 offer (or G5 when enforced) and its `mfa` cookie. */
  const offered = async (dep: Deployment, tag: string): Promise<{ email: string; res: Reply; mfa: { cookie: string } }> => {
    const email = address(tag);
    const res = await signup(dep.url, email, { scope: ['openid', 'email', 'offline_access'] });
    expect(res.status).toBe(200);
    return { email, res, mfa: cookieHeader(res.cookies) };
  };

  /** Signs up and enrols TOTP from the offer: the secret, the recovery codes and the tokens of the completion. */
  const withTotp = async (dep: Deployment, tag: string) => {
    const { email, res, mfa } = await offered(dep, tag);
    const code = await totpNow(res.body.authenticator_secret);
    const done = await post(dep.url, '/v1/verify_otp', { otp: code, is_totp: true }, mfa);
    expect(done.body.message).toBe('OTP verified successfully.');
    return { email, code, secret: res.body.authenticator_secret as string, codes: res.body.authenticator_recovery_codes as string[], done };
  };

  const login = (dep: Deployment, email: string) => post(dep.url, '/v1/login', { email, password: PASSWORD, scope: ['openid', 'email', 'offline_access'], state: 'st-1' });

  it('G7: signup answers the offer (TOTP secret, 200×200 PNG QR, 10 recovery codes, email OTP offer), withholds tokens and sets mfa (REST)', async () => {
    const { res } = await offered(d, 'offer');
    expect(res.body).toEqual(OFFER);
    expect(res.body.authenticator_recovery_codes).toHaveLength(10);
    expect(new Set(res.body.authenticator_recovery_codes).size).toBe(10);
    expect(res.body.authenticator_scanner_image).not.toMatch(/^data:/);
    expect(pngSize(res.body.authenticator_scanner_image)).toEqual({ signature: '89504e470d0a1a0a', width: 200, height: 200 });
    expect(res.cookies).toEqual([expect.stringMatching(/^mfa=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=300; HttpOnly; SameSite=Lax$/)]);
  });

  it('skip_mfa_setup in the offer state issues the tokens; the next login passes quietly (G6)', async () => {
    const { email, mfa } = await offered(d, 'skip');
    const skipped = await post(d.url, '/v1/skip_mfa_setup', { email }, mfa);
    expect(skipped.status).toBe(200);
    expect(skipped.body).toMatchObject({ message: 'MFA setup skipped', access_token: expect.any(String), user: { email } });
    expect(skipped.cookies).toEqual(expect.arrayContaining(['mfa=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax', expect.stringMatching(/^cookie_session=/)]));
    expect(decodeJwt(skipped.body.id_token).amr).toEqual(['pwd']);
    // the session is used up
    expect(await post(d.url, '/v1/skip_mfa_setup', {}, mfa)).toMatchObject({ status: 401, body: INVALID_SESSION });
    const profile = await get(d.url, '/v1/profile', bearer(skipped.body.access_token));
    expect(profile.body).toMatchObject({ has_skipped_mfa_setup_at: expect.any(Number), mfa_locked_at: null, enrolled_mfa_methods: [], is_multi_factor_auth_enabled: null });
    const again = await login(d, email);
    expect(again.body).toMatchObject({ message: 'Logged in successfully', access_token: expect.any(String) });
    expect(again.cookies.some((c) => c.startsWith('mfa='))).toBe(false);
  });

  it('TOTP: enrol at the offer, G4 challenge at login, a replayed code refused, the next code issues tokens with amr; skip refused once a factor exists', async () => {
    const { email, code, secret, done } = await withTotp(d, 'totp');
    expect(done.body).toMatchObject({ access_token: expect.any(String), user: { email } });
    expect(decodeJwt(done.body.id_token).amr).toEqual(['pwd', 'otp', 'mfa']);
    expect((await get(d.url, '/v1/profile', bearer(done.body.access_token))).body.enrolled_mfa_methods).toEqual(['totp']);

    const challenged = await login(d, email);
    expect(challenged.status).toBe(200);
    expect(challenged.body).toEqual(challenge('Proceed to mfa verification', { should_show_totp_screen: true }));
    const mfa = cookieHeader(challenged.cookies);
    expect(await post(d.url, '/v1/skip_mfa_setup', {}, mfa))
      .toMatchObject({ status: 400, body: { code: 'failed_precondition', message: 'cannot skip multi factor authentication setup' } });
    // the code that enrolled is refused: its time step was accepted already (replay guard, §4.5)
    const used = await post(d.url, '/v1/verify_otp', { otp: code, is_totp: true }, mfa);
    expect(used).toMatchObject({ status: 400, body: { code: 'invalid_argument', message: 'invalid otp' } });
    // the authenticator's next code (the next 30 s step, at the real clock) completes the login
    await sleep(30_000 - (Date.now() % 30_000) + 250);
    const next = await post(d.url, '/v1/verify_otp', { otp: await totpNow(secret), is_totp: true, email }, mfa);
    expect(next.status).toBe(200);
    expect(next.body).toMatchObject({ message: 'OTP verified successfully.', access_token: expect.any(String), user: { email, enrolled_mfa_methods: ['totp'] } });
    expect(decodeJwt(next.body.id_token)).toMatchObject({ amr: ['pwd', 'otp', 'mfa'], login_method: 'basic_auth' });
    expect(decodeJwt(next.body.access_token)).toMatchObject({ scope: ['openid', 'email', 'offline_access'] });
    expect(next.cookies).toEqual(expect.arrayContaining(['mfa=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax', expect.stringMatching(/^cookie_session=/)]));
  }, 60_000);

  it('a recovery code works once; 5 wrong codes lock TOTP verification, even the right code then gets 429', async () => {
    const { email, codes } = await withTotp(d, 'recovery');
    const first = await login(d, email);
    const ok = await post(d.url, '/v1/verify_otp', { otp: codes[3]!.toUpperCase(), is_totp: true, email }, cookieHeader(first.cookies));
    expect(ok.body).toMatchObject({ message: 'OTP verified successfully.', access_token: expect.any(String) });
    expect(decodeJwt(ok.body.id_token).amr).toEqual(['pwd', 'otp', 'mfa']);

    const second = cookieHeader((await login(d, email)).cookies);
    expect(await post(d.url, '/v1/verify_otp', { otp: codes[3], is_totp: true }, second)).toMatchObject({ status: 400, body: { message: 'invalid otp' } });
    for (let i = 0; i < 4; i++) {
      expect(await post(d.url, '/v1/verify_otp', { otp: '000000', is_totp: true }, second)).toMatchObject({ status: 400, body: { message: 'invalid otp' } });
    }
    const locked = await post(d.url, '/v1/verify_otp', { otp: codes[4], is_totp: true }, second);
    expect(locked).toMatchObject({ status: 429, body: { code: 'resource_exhausted', message: 'too many failed attempts, please try again later' } });
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('email OTP: enrolment from the offer and the G2 challenge at login, codes through the SMTP sink; lock refused while it is a fallback', async () => {
    const { email, mfa } = await offered(d, 'emailotp');
    const setup = await post(d.url, '/v1/email_otp_mfa_setup', { email }, mfa);
    expect(setup).toMatchObject({ status: 200, body: { message: 'Check your email for the verification code' } });
    expect(setup.cookies).toEqual([expect.stringMatching(/^mfa=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=300;/)]);
    const code = sink.otpOf(await sink.waitForMail(email));
    const enrolled = await post(d.url, '/v1/verify_otp', { otp: code }, mfa);
    expect(enrolled.body).toMatchObject({ message: 'OTP verified successfully.', user: { email, email_verified: true } });
    expect(decodeJwt(enrolled.body.id_token).amr).toEqual(['pwd', 'otp', 'mfa']);
    expect((await get(d.url, '/v1/profile', bearer(enrolled.body.access_token))).body.enrolled_mfa_methods).toEqual(['email_otp']);

    const challenged = await login(d, email);
    expect(challenged.body).toEqual(challenge('Please check email inbox for the OTP', { should_show_email_otp_screen: true }));
    const gate = cookieHeader(challenged.cookies);
    expect(await post(d.url, '/v1/lock_mfa', {}, gate)).toMatchObject({
      status: 400, body: { code: 'failed_precondition', message: 'a verified email or SMS OTP fallback is available — use it instead of locking your account' },
    });
    const second = sink.otpOf(await sink.waitForMail(email, { count: 2 }));
    const done = await post(d.url, '/v1/verify_otp', { otp: second }, gate);
    expect(done.body).toMatchObject({ message: 'OTP verified successfully.', access_token: expect.any(String) });
  });

  it('G1: a user who turned MFA off logs in with the password alone, factors kept; turning it on is refused without a method only', async () => {
    const { email, done } = await withTotp(d, 'prefoff');
    const off = await post(d.url, '/v1/update_profile', { is_multi_factor_auth_enabled: false }, bearer(done.body.access_token));
    expect(off.body).toEqual({ message: 'Profile details updated successfully.' });
    const direct = await login(d, email);
    expect(direct.body).toMatchObject({ message: 'Logged in successfully', access_token: expect.any(String) });
    expect(decodeJwt(direct.body.id_token).amr).toEqual(['pwd']);
    expect((await get(d.url, '/v1/profile', bearer(direct.body.access_token))).body).toMatchObject({ is_multi_factor_auth_enabled: false, enrolled_mfa_methods: ['totp'] });
    const on = await post(d.url, '/v1/update_profile', { is_multi_factor_auth_enabled: true }, bearer(direct.body.access_token));
    expect(on.body).toEqual({ message: 'Profile details updated successfully.' });
    expect((await login(d, email)).body.message).toBe('Proceed to mfa verification');
  });

  it('G0: lock_mfa locks the account (no tokens); every first step then refuses with the lock message', async () => {
    const { email, mfa } = await offered(d, 'lock');
    const locked = await post(d.url, '/v1/lock_mfa', { email }, mfa);
    expect(locked).toMatchObject({ status: 200, body: { message: 'Your account is locked. Contact your administrator to regain access.' } });
    expect(locked.cookies).toEqual(['mfa=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax']);
    expect(await post(d.url, '/v1/skip_mfa_setup', {}, mfa)).toMatchObject({ status: 401, body: INVALID_SESSION });
    expect(await login(d, email)).toMatchObject({ status: 400, body: { code: 'failed_precondition', message: LOCKED } });
    // the magic link is a first step too
    await post(d.url, '/v1/magic_link_login', { email });
    const link = sink.tokenLink(await sink.waitForMail(email));
    const visit = await get(d.url, `${link.pathname}${link.search}`);
    expect(visit.status).toBe(302);
    const to = new URL(visit.headers.get('location')!);
    expect(Object.fromEntries(to.searchParams)).toMatchObject({ error: 'failed_precondition', error_description: LOCKED });
  });

  it('a completion that issues tokens is audited as user.login_success (behaviour.md §5.7): verify_otp and skip_mfa_setup', async () => {
    const { done } = await withTotp(d, 'audit-otp');
    const skipped = await offered(d, 'audit-skip');
    const skip = await post(d.url, '/v1/skip_mfa_setup', {}, skipped.mfa);
    const admin = { 'x-service-admin-secret': d.adminSecret };
    const methodsOf = async (userId: string): Promise<string[]> => {
      for (let i = 0; i < 80; i++) {
        const res = await post(d.url, '/v1/admin/audit_logs', { action: 'user.login_success', actor_id: userId }, admin);
        const rows = res.body.audit_logs as Array<{ metadata: string }>;
        if (rows.length > 0) return rows.map((r) => (JSON.parse(r.metadata) as { method: string }).method);
        await sleep(250);
      }
      return [];
    };
    expect(await methodsOf(done.body.user.id)).toEqual(['totp']);
    expect(await methodsOf(skip.body.user.id)).toEqual(['skip_mfa_setup']);
  });

  it('G0 ends only through admin update_user with reset_mfa: lock, factors and skip cleared, the offer is back (§4.7)', async () => {
    const { email, res, mfa } = await offered(d, 'unlock');
    // a pending TOTP from the offer, then locked
    expect((await post(d.url, '/v1/lock_mfa', { email }, mfa)).status).toBe(200);
    expect(await login(d, email)).toMatchObject({ status: 400, body: { message: LOCKED } });
    const admin = { 'x-service-admin-secret': d.adminSecret };
    const user = await post(d.url, '/v1/admin/user', { email }, admin);
    expect(user.body).toMatchObject({ email, mfa_locked_at: expect.any(Number) });
    // the user's own profile cannot clear it: only the admin reset does
    const reset = await post(d.url, '/v1/admin/update_user', { id: user.body.id, reset_mfa: true }, admin);
    expect(reset).toMatchObject({ status: 200, body: { id: user.body.id, mfa_locked_at: null, has_skipped_mfa_setup_at: null, is_multi_factor_auth_enabled: null, enrolled_mfa_methods: [] } });
    // unlocked, never skipped, no factor: the offer again, with a new secret (the old pending one is gone)
    const again = await login(d, email);
    expect(again.body).toEqual(OFFER);
    expect(again.body.authenticator_secret).not.toBe(res.body.authenticator_secret);
  });

  if (mode === 'split') {
    it('ResetUserMfa (internal gRPC, the internal token) deletes every factor of the user; nothing of another', async () => {
      const { email, done } = await withTotp(d, 'reset');
      const other = await withTotp(d, 'reset-other');
      const userId = done.body.user.id as string;
      const mfa = createGrpcClient(serviceDescriptor('mfa.internal'), { address: d.serviceGrpcAddresses.get('mfa')!, internalToken: d.internalToken });
      try {
        const ctx = (): CallContext => createCallContext({ protocol: 'grpc' });
        // TOTP active + its 10 recovery codes
        expect(await mfa.call('ResetUserMfa', { user_id: userId }, ctx())).toEqual({ deleted: 11 });
        expect(await mfa.call('EnrolledMfaMethods', { user_ids: [userId, other.done.body.user.id] }, ctx())).toEqual({
          users: [{ user_id: userId, methods: [] }, { user_id: other.done.body.user.id, methods: ['totp'] }],
        });
      } finally {
        mfa.close();
      }
      // back to the offer (G7): a new enrolment is offered
      expect((await login(d, email)).body).toEqual(OFFER);
      // a locked user's factors go too; the lock itself is the user row's (admin update_user with reset_mfa clears it)
      const locked = await offered(d, 'reset-locked');
      const skipped = await post(d.url, '/v1/skip_mfa_setup', {}, locked.mfa);
      const lockedId = skipped.body.user.id as string;
      const setup = await post(d.url, '/v1/totp_mfa_setup', {}, bearer(skipped.body.access_token));
      expect((await post(d.url, '/v1/lock_mfa', {}, cookieHeader(setup.cookies))).status).toBe(200);
      const again = createGrpcClient(serviceDescriptor('mfa.internal'), { address: d.serviceGrpcAddresses.get('mfa')!, internalToken: d.internalToken });
      try {
        // the pending TOTP of the setup and its 10 codes
        expect(await again.call('ResetUserMfa', { user_id: lockedId }, createCallContext({ protocol: 'grpc' }))).toEqual({ deleted: 11 });
      } finally {
        again.close();
      }
      expect(await login(d, locked.email)).toMatchObject({ status: 400, body: { message: LOCKED } });
      // without the internal token the internal API refuses
      const outsider = createGrpcClient(serviceDescriptor('mfa.internal'), { address: d.serviceGrpcAddresses.get('mfa')! });
      try {
        await expect(outsider.call('ResetUserMfa', { user_id: lockedId }, createCallContext({ protocol: 'grpc' }))).rejects.toMatchObject({ code: 'permission_denied' });
      } finally {
        outsider.close();
      }
    });
  }

  it('the verify_email link of a magic link redirects with mfa_required, mfa_methods and mfa_gate, and sets mfa; POST verify_email answers the offer (§3.4)', async () => {
    const email = address('link');
    await post(d.url, '/v1/magic_link_login', { email, state: 'st-7' });
    const link = sink.tokenLink(await sink.waitForMail(email));
    const visit = await get(d.url, `${link.pathname}${link.search}`);
    expect(visit.status).toBe(302);
    const to = new URL(visit.headers.get('location')!);
    expect(Object.fromEntries(to.searchParams)).toEqual({ mfa_required: '1', mfa_methods: 'totp,webauthn,email_otp', mfa_gate: 'offer', state: 'st-7' });
    expect(visit.cookies).toEqual([expect.stringMatching(/^mfa=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=300;/)]);
    // the gated browser continues with the MFA session
    const skipped = await post(d.url, '/v1/skip_mfa_setup', {}, cookieHeader(visit.cookies));
    expect(skipped.body).toMatchObject({ message: 'MFA setup skipped', user: { email } });
    expect(decodeJwt(skipped.body.access_token)).toMatchObject({ login_method: 'magic_link_login' });
    // POST verify_email is gated the same way (a fresh address: not skipped yet)
    const other = address('link-post');
    await post(d.url, '/v1/magic_link_login', { email: other });
    const token = sink.tokenLink(await sink.waitForMail(other)).searchParams.get('token')!;
    const verified = await post(d.url, '/v1/verify_email', { token });
    expect(verified.body).toEqual(OFFER);
    expect(verified.cookies).toEqual([expect.stringMatching(/^mfa=/)]);
  });

  it('bad input: an otp of 17 characters, wrong types → 400 with the message, nothing counted or consumed', async () => {
    const { res, mfa } = await offered(d, 'badinput');
    const bad = { code: 'invalid_argument' };
    for (let i = 0; i < 6; i++) {
      expect(await post(d.url, '/v1/verify_otp', { otp: 'A'.repeat(17), is_totp: true }, mfa))
        .toMatchObject({ status: 400, body: { ...bad, message: 'otp must be at most 16 characters' } });
    }
    expect(await post(d.url, '/v1/verify_otp', { otp: 123456, is_totp: true }, mfa)).toMatchObject({ status: 400, body: bad });
    expect(await post(d.url, '/v1/verify_otp', { otp: '123456', is_totp: 'yes' }, mfa)).toMatchObject({ status: 400, body: bad });
    expect(await post(d.url, '/v1/verify_otp', { is_totp: true }, mfa)).toMatchObject({ status: 400, body: { ...bad, message: 'otp is required' } });
    expect(await post(d.url, '/v1/skip_mfa_setup', { email: 42 }, mfa)).toMatchObject({ status: 400, body: bad });
    // no lockout was counted and the session stands: the right code completes it
    const ok = await post(d.url, '/v1/verify_otp', { otp: await totpNow(res.body.authenticator_secret), is_totp: true }, mfa);
    expect(ok.body.message).toBe('OTP verified successfully.');
  });

  it('user-credential setups: totp_mfa_setup answers the TOTP screen and its mfa cookie, email OTP setup mails a code, SMS is not available; without a credential 401', async () => {
    const { email, mfa } = await offered(d, 'usersetup');
    const tokens = (await post(d.url, '/v1/skip_mfa_setup', {}, mfa)).body.access_token as string;
    const setup = await post(d.url, '/v1/totp_mfa_setup', {}, bearer(tokens));
    expect(setup.body).toEqual({
      ...OFFER, message: 'Proceed to totp verification screen', should_offer_email_otp_mfa_setup: false, should_offer_webauthn_mfa_setup: false,
    });
    const done = await post(d.url, '/v1/verify_otp', { otp: await totpNow(setup.body.authenticator_secret), is_totp: true }, cookieHeader(setup.cookies));
    expect(done.body).toMatchObject({ message: 'OTP verified successfully.', user: { email } });
    expect(await post(d.url, '/v1/totp_mfa_setup', {})).toMatchObject({ status: 401, body: { code: 'unauthenticated', message: 'unauthorized' } });
    expect(await post(d.url, '/v1/email_otp_mfa_setup', {})).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
    // email OTP with the user's credential: a code to the user's own address, completed by verify_otp
    const emailSetup = await post(d.url, '/v1/email_otp_mfa_setup', {}, bearer(done.body.access_token));
    expect(emailSetup.body).toEqual({ message: 'Check your email for the verification code' });
    const code = sink.otpOf(await sink.waitForMail(email));
    const both = await post(d.url, '/v1/verify_otp', { otp: code }, cookieHeader(emailSetup.cookies));
    expect(both.body).toMatchObject({ message: 'OTP verified successfully.', user: { enrolled_mfa_methods: ['totp', 'email_otp'] } });
    // SMS is not configured here: the method is not available
    expect(await post(d.url, '/v1/sms_otp_mfa_setup', {}, bearer(done.body.access_token)))
      .toMatchObject({ status: 400, body: { code: 'failed_precondition', message: 'SMS OTP is not available on this server' } });
  });

  it('GraphQL: signup answers the offer; skip_mfa_setup, totp_mfa_setup, verify_otp with is_totp, the G4 login and lock_mfa with the same fields as REST', async () => {
    const gql = async (query: string, variables: Record<string, unknown>, headers: Record<string, string> = {}) => {
      const res = await fetch(`${d.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', origin: d.url, ...headers }, body: JSON.stringify({ query, variables }) });
      return { body: (await res.json()) as any, cookies: res.headers.getSetCookie() };
    };
    const fresh = address('gql-fresh');
    const su = await gql('mutation s($p: SignUpRequest!) { signup(params: $p) { message access_token should_show_totp_screen should_offer_email_otp_mfa_setup authenticator_secret authenticator_recovery_codes } }',
      { p: { email: fresh, password: PASSWORD, confirm_password: PASSWORD } });
    expect(su.body.data.signup).toMatchObject({
      message: 'Proceed to mfa setup', access_token: null, should_show_totp_screen: true, should_offer_email_otp_mfa_setup: true,
      authenticator_secret: expect.stringMatching(/^[A-Z2-7]{32}$/),
    });
    expect(su.body.data.signup.authenticator_recovery_codes).toHaveLength(10);
    const skip = await gql('mutation k($p: SkipMfaSetupRequest!) { skip_mfa_setup(params: $p) { message access_token user { email has_skipped_mfa_setup_at enrolled_mfa_methods } } }',
      { p: {} }, cookieHeader(su.cookies));
    expect(skip.body.data.skip_mfa_setup).toMatchObject({ message: 'MFA setup skipped', access_token: expect.any(String), user: { email: fresh, enrolled_mfa_methods: [] } });
    const totp = await gql('mutation t { totp_mfa_setup { message should_show_totp_screen authenticator_secret } }', {}, bearer(skip.body.data.skip_mfa_setup.access_token));
    expect(totp.body.data.totp_mfa_setup).toEqual({ message: 'Proceed to totp verification screen', should_show_totp_screen: true, authenticator_secret: expect.stringMatching(/^[A-Z2-7]{32}$/) });
    const verify = 'mutation v($p: VerifyOTPRequest!) { verify_otp(params: $p) { message access_token id_token user { enrolled_mfa_methods } } }';
    const enrolled = await gql(verify, { p: { otp: await totpNow(totp.body.data.totp_mfa_setup.authenticator_secret), is_totp: true } }, cookieHeader(totp.cookies));
    expect(enrolled.body.data.verify_otp).toMatchObject({ message: 'OTP verified successfully.', user: { enrolled_mfa_methods: ['totp'] } });
    expect(decodeJwt(enrolled.body.data.verify_otp.id_token).amr).toEqual(['pwd', 'otp', 'mfa']);
    // G4 through GraphQL login, then lock_mfa with that session
    const g4 = await gql('mutation g($p: LoginRequest!) { login(params: $p) { message access_token should_show_totp_screen } }', { p: { email: fresh, password: PASSWORD } });
    expect(g4.body.data.login).toEqual({ message: 'Proceed to mfa verification', access_token: null, should_show_totp_screen: true });
    const lock = await gql('mutation l($p: LockMfaRequest!) { lock_mfa(params: $p) { message } }', { p: {} }, cookieHeader(g4.cookies));
    expect(lock.body.data.lock_mfa).toEqual({ message: 'Your account is locked. Contact your administrator to regain access.' });
    const refused = await gql('mutation g($p: LoginRequest!) { login(params: $p) { message } }', { p: { email: fresh, password: PASSWORD } });
    expect(refused.body).toMatchObject({ errors: [{ message: LOCKED, extensions: { code: 'FAILED_PRECONDITION' } }] });
    const noSession = await gql('mutation l($p: LockMfaRequest!) { lock_mfa(params: $p) { message } }', { p: {} });
    expect(noSession.body).toMatchObject({ errors: [{ message: 'invalid session', extensions: { code: 'UNAUTHENTICATED' } }] });
  });

  it('native gRPC: Login answers the G7 offer with the mfa cookie as metadata; VerifyOtp with a TOTP code completes it', async () => {
    const email = address('grpc');
    await signup(d.url, email).then(async (r) => post(d.url, '/v1/lock_mfa', {}, cookieHeader(r.cookies)));
    const client = createGrpcClient(serviceDescriptor('authn'), { address: d.grpcAddress });
    try {
      // the locked user: G0 over gRPC
      await expect(client.call('Login', { email, password: PASSWORD }, createCallContext({ protocol: 'grpc' })))
        .rejects.toMatchObject({ code: 'failed_precondition', message: LOCKED });
      const fresh = address('grpc-fresh');
      await client.call('Signup', { email: fresh, password: PASSWORD, confirm_password: PASSWORD }, createCallContext({ protocol: 'grpc' }));
      const ctx = createCallContext({ protocol: 'grpc' });
      const res = await client.call('Login', { email: fresh, password: PASSWORD }, ctx);
      expect(res).toMatchObject({ message: 'Proceed to mfa setup', access_token: null, should_show_totp_screen: true, authenticator_secret: expect.any(String) });
      const mfa = cookieHeader(ctx.setCookies);
      const done = await client.call('VerifyOtp', { otp: await totpNow(res.authenticator_secret as string), is_totp: true }, createCallContext({ headers: mfa, protocol: 'grpc' }));
      expect(done).toMatchObject({ message: 'OTP verified successfully.', user: { email: fresh, enrolled_mfa_methods: ['totp'] } });
      expect(decodeJwt(done.id_token as string).amr).toEqual(['pwd', 'otp', 'mfa']);
    } finally {
      client.close();
    }
  });

  it('G5 under --enforce-mfa: the same answer as the offer, but skip and turning MFA off are refused; enrolling completes it', async () => {
    const { email, res, mfa } = await offered(enforced, 'enforced');
    expect(res.body).toEqual(OFFER);
    expect(await post(enforced.url, '/v1/skip_mfa_setup', {}, mfa))
      .toMatchObject({ status: 400, body: { code: 'failed_precondition', message: 'cannot skip multi factor authentication setup' } });
    const done = await post(enforced.url, '/v1/verify_otp', { otp: await totpNow(res.body.authenticator_secret), is_totp: true }, mfa);
    expect(done.body).toMatchObject({ message: 'OTP verified successfully.', user: { email } });
    expect(await post(enforced.url, '/v1/update_profile', { is_multi_factor_auth_enabled: false }, bearer(done.body.access_token))).toMatchObject({
      status: 400, body: { code: 'failed_precondition', message: 'cannot disable multi factor authentication as it is enforced by organization' },
    });
    const meta = (await get(enforced.url, '/v1/meta')).body;
    expect(meta).toMatchObject({ is_multi_factor_auth_enabled: true, is_mfa_enforced: true, is_totp_mfa_enabled: true, is_email_otp_mfa_enabled: true, is_webauthn_enabled: true, is_sms_otp_mfa_enabled: false });
  });
});
