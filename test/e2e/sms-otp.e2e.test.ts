/**
 * @module test/e2e/sms-otp
 * One-time codes by SMS end to end in both modes (issue 16; behaviour.md §3.2 phone signup, §3.3 step
 * 8, §3.4 forgot/reset password by phone, §4.2–§4.4): authn asks mfa for an MFA session, mfa writes
 * an `sms.send` job to its outbox, the notifications worker sends it with the real `twilio` client
 * to the Twilio stand-in of libs/testing, and the test reads the code from there. Every step runs on
 * REST, GraphQL and native gRPC where the operation exists there.
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { decodeJwt } from 'jose';
import { openDatabase, type Database } from '@gatehouse/db';
import { waitForAudits } from './audit-support.ts';
import { notificationsSchema } from '@gatehouse/notifications';
import { createLogger } from '@gatehouse/observability';
import { freePort, runGatehouse, startDeployment, startTwilioSink, TWILIO_TEST_CREDENTIALS, type Deployment, type Mode, type TwilioSink } from '@gatehouse/testing';
import { closeGrpcClients, grpcRpc, rpcName, type Result, type Surface } from '../support/surfaces.ts';
import { NEW_PASSWORD, PASSWORD, post, sleep } from './email-support.ts';

const PHONE_SIGNUP = 'Please check the OTP in your inbox';
const LOGIN_SMS = 'Please check text message for the OTP';
const RESET_SMS = 'Please enter the OTP sent to your phone number and change your password.';
const INVALID_SESSION = { code: 'unauthenticated', message: 'invalid session' };
const INVALID_OTP = { code: 'invalid_argument', message: 'invalid otp' };

type Op = 'signup' | 'login' | 'verify_otp' | 'resend_otp' | 'forgot_password' | 'reset_password';

const USER = 'id phone_number phone_number_verified signup_methods';
const AUTH = `message should_show_mobile_otp_screen should_show_email_otp_screen access_token refresh_token id_token expires_in user { ${USER} }`;
const GQL: Record<Op, string> = {
  signup: `mutation signup($data: SignUpRequest!) { signup(params: $data) { ${AUTH} } }`,
  login: `mutation login($data: LoginRequest!) { login(params: $data) { ${AUTH} } }`,
  verify_otp: `mutation verifyOtp($data: VerifyOTPRequest!) { verify_otp(params: $data) { ${AUTH} } }`,
  resend_otp: 'mutation resendOtp($data: ResendOTPRequest!) { resend_otp(params: $data) { message } }',
  forgot_password: 'mutation forgotPassword($data: ForgotPasswordRequest!) { forgot_password(params: $data) { message should_show_mobile_otp_screen } }',
  reset_password: 'mutation resetPassword($data: ResetPasswordRequest!) { reset_password(params: $data) { message } }',
};

/** A fresh valid phone number (behaviour.md §3.1: `+` and 10–15 digits). */
const phone = (): string => `+1555${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
/** A code of the alphabet that is not `code`. */
const wrong = (code: string): string => (code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA');
/** The `Cookie` header value of the `mfa` cookie among Set-Cookie values. */
const mfaOf = (cookies: readonly string[]): string => {
  const c = cookies.find((v) => v.startsWith('mfa=') && !v.startsWith('mfa=;'));
  if (!c) throw new Error(`no mfa cookie in ${JSON.stringify(cookies)}`);
  return c.split(';')[0]!;
};

/** `op` on one surface of `d`; `cookie` is a Cookie header value. */
async function call(d: Deployment, surface: Surface, op: Op, args: Record<string, unknown>, cookie?: string): Promise<Result> {
  const creds = cookie ? { cookie } : undefined;
  if (surface === 'grpc') return grpcRpc(d, rpcName(op), args, creds, op === 'resend_otp' ? 'mfa' : 'authn');
  if (surface === 'rest') {
    const r = await post(d.url, `/v1/${op}`, args, cookie ? { cookie } : {});
    return r.status === 200
      ? { ok: true, body: r.body, cookies: r.cookies, status: r.status }
      : { ok: false, code: r.body.code, message: r.body.message, cookies: r.cookies, status: r.status };
  }
  const res = await fetch(`${d.url}/graphql`, {
    method: 'POST', headers: { 'content-type': 'application/json', origin: d.url, ...(cookie ? { cookie } : {}) },
    body: JSON.stringify({ query: GQL[op], variables: { data: args } }),
  });
  const json = (await res.json()) as { data?: Record<string, any>; errors?: Array<{ message: string; extensions: { code: string } }> };
  const cookies = res.headers.getSetCookie();
  const err = json.errors?.[0];
  if (err) return { ok: false, code: err.extensions.code.toLowerCase(), message: err.message, cookies, status: res.status };
  return { ok: true, body: json.data![op], cookies, status: res.status };
}
const ok = (r: Result): Extract<Result, { ok: true }> => {
  if (!r.ok) throw new Error(`expected success, got ${r.code}: ${r.message}`);
  return r;
};

describe.each(['all', 'split'] as Mode[])('one-time codes by SMS (%s)', (mode) => {
  let sink: TwilioSink;
  let d: Deployment;
  let db: Database;

  beforeAll(async () => {
    sink = await startTwilioSink();
    d = await startDeployment(mode, { flags: [...sink.flags(), '--enable-phone-verification'] });
    db = await openDatabase({ type: d.databaseType, url: d.databaseUrl }, notificationsSchema, { logger: createLogger('silent') });
  }, 120_000);
  afterAll(async () => {
    closeGrpcClients();
    await db?.close();
    await d?.stop();
    await sink?.close();
  });

  /** Phone-only signup (phone verification on); resolves with the mfa cookie and the texted code. */
  async function signupByPhone(surface: Surface, number = phone()) {
    const res = ok(await call(d, surface, 'signup', { phone_number: ` ${number} `, password: PASSWORD, confirm_password: PASSWORD, state: 'st-9' }));
    const sms = await sink.waitForSms(number);
    return { number, res, mfa: mfaOf(res.cookies), code: sink.otpOf(sms), sms };
  }

  it.each<[Surface, Surface]>([['rest', 'rest'], ['graphql', 'grpc'], ['grpc', 'graphql']])(
    'phone signup (%s) texts a 600 s code; verify_otp (%s) with it verifies the phone and logs in',
    async (signupOn, verifyOn) => {
      const { number, res, mfa, code, sms } = await signupByPhone(signupOn);
      expect(res.body).toMatchObject({ message: PHONE_SIGNUP, should_show_mobile_otp_screen: true, should_show_email_otp_screen: false, access_token: null, user: null });
      const cookie = res.cookies.find((c) => c.startsWith('mfa='))!;
      expect(cookie).toMatch(/^mfa=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=600; HttpOnly; SameSite=Lax$/);
      expect(sms).toMatchObject({ from: TWILIO_TEST_CREDENTIALS.sender, body: `Your verification code is: ${code}` });

      const v = ok(await call(d, verifyOn, 'verify_otp', { otp: code.toLowerCase(), phone_number: number }, mfa));
      expect(v.body).toMatchObject({
        message: 'OTP verified successfully.', should_show_mobile_otp_screen: false,
        user: { phone_number: number, phone_number_verified: true, signup_methods: 'mobile_basic_auth' },
      });
      expect(decodeJwt(String(v.body.access_token))).toMatchObject({ login_method: 'mobile_basic_auth' });
      expect(v.cookies).toEqual(expect.arrayContaining([expect.stringMatching(/^mfa=; Path=\/; Max-Age=0/), expect.stringMatching(/^cookie_session=[^;]+;/)]));
      // single use; the phone is verified now, so the password alone logs in
      expect(await call(d, verifyOn, 'verify_otp', { otp: code }, mfa)).toMatchObject({ ok: false, ...INVALID_SESSION });
      expect(ok(await call(d, 'rest', 'login', { phone_number: number, password: PASSWORD })).body.message).toBe('Logged in successfully');
      expect(sink.to(number)).toHaveLength(1);
    },
  );

  it('login of an unverified phone texts a code (step 8); resend keeps the 30 s rule, then a new code replaces the old one', async () => {
    const { number, code: first } = await signupByPhone('rest');
    // within 30 s of the signup code: the live code stands and no second SMS goes out (§4.4)
    const login = ok(await call(d, 'graphql', 'login', { phone_number: number, password: PASSWORD }));
    expect(login.body).toMatchObject({ message: LOGIN_SMS, should_show_mobile_otp_screen: true, access_token: null, user: null });
    const mfa = mfaOf(login.cookies);
    expect(login.cookies.find((c) => c.startsWith('mfa='))).toMatch(/Max-Age=300;/);
    // the same step 8 on REST and gRPC: each login its own MFA session, still no second SMS
    for (const surface of ['rest', 'grpc'] as const) {
      const again = ok(await call(d, surface, 'login', { phone_number: number, password: PASSWORD }));
      expect(again.body).toMatchObject({ message: LOGIN_SMS, should_show_mobile_otp_screen: true, access_token: null });
      expect(mfaOf(again.cookies)).not.toBe(mfa);
    }
    expect(sink.to(number)).toHaveLength(1);
    for (const surface of ['rest', 'graphql', 'grpc'] as const) {
      expect(await call(d, surface, 'resend_otp', { phone_number: number }, mfa)).toMatchObject({ ok: false, code: 'resource_exhausted', message: 'please wait before requesting another OTP' });
    }
    const early = await post(d.url, '/v1/resend_otp', {}, { cookie: mfa });
    expect(Number(early.headers.get('retry-after'))).toBeGreaterThan(0);
    await sleep(31_000);
    const resent = ok(await call(d, 'grpc', 'resend_otp', { phone_number: number }, mfa));
    expect(resent.body).toEqual({ message: 'OTP has been sent. Please check your inbox' });
    // the audit row reaches admin's log through mfa's outbox (which keeps nothing once published, issue 23)
    const resentAudit = await waitForAudits(d, (a) => a.action === 'user.otp_resent' && a.metadata.channel === 'sms' && a.metadata.protocol === 'grpc', ['user.otp_resent']);
    expect(resentAudit.length).toBeGreaterThan(0);
    const second = sink.otpOf(await sink.waitForSms(number, { count: 2 }));
    expect(await call(d, 'rest', 'verify_otp', { otp: first }, mfa)).toMatchObject({ ok: false, ...INVALID_OTP });
    const v = ok(await call(d, 'rest', 'verify_otp', { otp: second, phone_number: number }, mfa));
    expect(v.body).toMatchObject({ message: 'OTP verified successfully.', user: { phone_number_verified: true } });
    expect(sink.to(number)).toHaveLength(2);
  }, 90_000);

  it.each<Surface>(['rest', 'graphql', 'grpc'])('forgot_password by phone (%s) → reset_password with the texted OTP → login with the new password', async (surface) => {
    const { number, mfa: signupMfa, code: signupCode } = await signupByPhone('rest');
    ok(await call(d, 'rest', 'verify_otp', { otp: signupCode }, signupMfa));
    // verify_otp consumed the signup code, so the reset texts a new one at once (§4.4)
    const forgot = ok(await call(d, surface, 'forgot_password', { phone_number: number }));
    expect(forgot.body).toEqual({ message: RESET_SMS, should_show_mobile_otp_screen: true });
    const mfa = mfaOf(forgot.cookies);
    const code = sink.otpOf(await sink.waitForSms(number, { count: 2 }));
    // a password_reset session completes nothing but reset_password
    expect(await call(d, surface, 'verify_otp', { otp: code }, mfa)).toMatchObject({ ok: false, ...INVALID_SESSION });
    expect(await call(d, surface, 'reset_password', { otp: code, phone_number: number, password: NEW_PASSWORD, confirm_password: PASSWORD }, mfa))
      .toMatchObject({ ok: false, code: 'invalid_argument', message: "passwords don't match" });
    expect(await call(d, surface, 'reset_password', { otp: code, password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }, mfa))
      .toMatchObject({ ok: false, code: 'invalid_argument', message: 'phone number is required' });
    expect(await call(d, surface, 'reset_password', { otp: code, phone_number: number, password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }))
      .toMatchObject({ ok: false, ...INVALID_SESSION });
    const reset = ok(await call(d, surface, 'reset_password', { otp: code, phone_number: number, password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }, mfa));
    expect(reset.body).toEqual({ message: 'Password updated successfully.' });
    expect(reset.cookies.some((c) => c.startsWith('cookie_session='))).toBe(false);
    expect(await call(d, surface, 'reset_password', { otp: code, phone_number: number, password: PASSWORD, confirm_password: PASSWORD }, mfa))
      .toMatchObject({ ok: false, ...INVALID_SESSION });
    expect(await call(d, 'rest', 'login', { phone_number: number, password: PASSWORD })).toMatchObject({ ok: false, code: 'unauthenticated', message: 'invalid credentials' });
    expect(ok(await call(d, surface, 'login', { phone_number: number, password: NEW_PASSWORD })).body.message).toBe('Logged in successfully');
  }, 90_000);

  it('audit rows (§5.7) go out through the outboxes: user.phone_verified, user.forgot_password_requested, user.otp_resent, user.password_reset', async () => {
    const { number, mfa: signupMfa, code: signupCode } = await signupByPhone('rest');
    const verified = ok(await call(d, 'rest', 'verify_otp', { otp: signupCode }, signupMfa));
    const userId = String(verified.body.user.id);
    const mfa = mfaOf(ok(await call(d, 'grpc', 'forgot_password', { phone_number: number })).cookies);
    const code = sink.otpOf(await sink.waitForSms(number, { count: 2 }));
    ok(await call(d, 'graphql', 'reset_password', { otp: code, phone_number: number, password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }, mfa));
    // read from admin's audit log: the outboxes keep nothing once published (issue 23)
    const expected = [
      // the account's creation is audited once (behaviour.md §5.7 user.signup), then the SMS flows; the
      // verify_otp that proves the phone issues tokens, so it is a login too (§8 user.login)
      ['user.signup', 'rest'], ['user.phone_verified', 'rest'], ['user.login_success', 'rest'], ['user.forgot_password_requested', 'grpc'], ['user.password_reset', 'graphql'],
    ];
    const authn = (await waitForAudits(d, (a) => a.resource_id === userId, expected.map(([action]) => action!)))
      .filter((a) => expected.some(([action]) => action === a.action));
    expect(authn.map((a) => [a.action, a.metadata.protocol]).sort()).toEqual([...expected].sort());
    expect(JSON.stringify(authn)).not.toContain(NEW_PASSWORD);
    expect(JSON.stringify(authn)).not.toContain(code);
  });

  it('reset_password by OTP: 5 wrong codes then the right one → 429 on every surface, nothing changed', async () => {
    const { number, code } = await signupByPhone('rest');
    // the signup code was texted less than 30 s ago and is still live: it stands, no second SMS (§4.4)
    const mfa = mfaOf(ok(await call(d, 'rest', 'forgot_password', { phone_number: number })).cookies);
    const args = { phone_number: number, password: NEW_PASSWORD, confirm_password: NEW_PASSWORD };
    for (let i = 0; i < 5; i++) {
      expect(await call(d, (['rest', 'graphql', 'grpc'] as const)[i % 3]!, 'reset_password', { ...args, otp: wrong(code) }, mfa)).toMatchObject({ ok: false, ...INVALID_OTP });
    }
    for (const surface of ['rest', 'graphql', 'grpc'] as const) {
      expect(await call(d, surface, 'reset_password', { ...args, otp: code }, mfa))
        .toMatchObject({ ok: false, code: 'resource_exhausted', message: 'too many failed attempts, please try again later' });
    }
    const rest = await post(d.url, '/v1/reset_password', { ...args, otp: code }, { cookie: mfa });
    expect(rest.status).toBe(429);
    expect(Number(rest.headers.get('retry-after'))).toBeGreaterThan(0);
    // nothing changed: the old password still logs in (the phone still unverified: step 8)
    expect(ok(await call(d, 'rest', 'login', { phone_number: number, password: PASSWORD })).body.message).toBe(LOGIN_SMS);
    expect(sink.to(number)).toHaveLength(1);
  }, 90_000);

  it.each<Surface>(['rest', 'graphql', 'grpc'])('forgot_password for an unknown phone (%s): the same answer and cookie, no SMS, no code works', async (surface) => {
    const unknown = phone();
    const forgot = ok(await call(d, surface, 'forgot_password', { phone_number: unknown }));
    expect(forgot.body).toEqual({ message: RESET_SMS, should_show_mobile_otp_screen: true });
    expect(forgot.cookies.find((c) => c.startsWith('mfa='))).toMatch(/^mfa=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=300; HttpOnly; SameSite=Lax$/);
    const mfa = mfaOf(forgot.cookies);
    expect(await call(d, surface, 'reset_password', { otp: 'ABCDEF', phone_number: unknown, password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }, mfa))
      .toMatchObject({ ok: false, ...INVALID_OTP });
    expect(await call(d, surface, 'resend_otp', { phone_number: unknown }, mfa)).toMatchObject({ ok: false, code: 'resource_exhausted', message: 'please wait before requesting another OTP' });
    await sleep(1500);
    expect(sink.to(unknown)).toEqual([]);
  });

  it('bad input: wrong types and an over-long otp → 400; nothing is stored or sent', async () => {
    const number = phone();
    for (const body of [{ phone_number: 5551234567, password: PASSWORD, confirm_password: PASSWORD }, { phone_number: number, password: 12345678, confirm_password: 12345678 }]) {
      expect(await post(d.url, '/v1/signup', body)).toMatchObject({ status: 400, body: { code: 'invalid_argument' } });
    }
    expect(await post(d.url, '/v1/signup', { phone_number: '12ab', password: PASSWORD, confirm_password: PASSWORD }))
      .toMatchObject({ status: 400, body: { code: 'invalid_argument', message: 'invalid phone number' } });
    expect(await post(d.url, '/v1/forgot_password', { phone_number: 42 })).toMatchObject({ status: 400, body: { code: 'invalid_argument' } });
    await sleep(1000);
    expect(sink.to(number)).toEqual([]);
    // nothing was stored: the number is still free
    const { mfa, code } = await signupByPhone('rest', number);
    expect(await post(d.url, '/v1/verify_otp', { otp: 'A'.repeat(17) }, { cookie: mfa }))
      .toMatchObject({ status: 400, body: { code: 'invalid_argument', message: 'otp must be at most 16 characters' } });
    expect(await post(d.url, '/v1/verify_otp', { otp: ['A'] }, { cookie: mfa })).toMatchObject({ status: 400, body: { code: 'invalid_argument' } });
    expect(await post(d.url, '/v1/reset_password', { otp: 'A'.repeat(17), phone_number: number, password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }, { cookie: mfa }))
      .toMatchObject({ status: 400, body: { code: 'invalid_argument', message: 'otp must be at most 16 characters' } });
    expect(await call(d, 'graphql', 'verify_otp', { otp: 7 }, mfa)).toMatchObject({ ok: false, code: 'invalid_argument' });
    // none of that used the code up or counted as a failure
    expect(ok(await call(d, 'rest', 'verify_otp', { otp: code }, mfa)).body.user).toMatchObject({ phone_number_verified: true });
  });

  it('Twilio failing the first two attempts: retried, one message delivered, attempts failed, failed, sent', async () => {
    sink.failNext(2);
    const { number, code } = await signupByPhone('rest');
    expect(sink.failed()).toBe(2);
    await sleep(2000);
    expect(sink.to(number)).toHaveLength(1);
    const rows = await db.execute<{ job_id: string; attempt: number | string; outcome: string; channel: string; event_name: string }>(
      'select job_id, attempt, outcome, channel, event_name from notification_attempts where recipient = ? order by attempt', [number]);
    expect(rows.map((r) => [Number(r.attempt), r.outcome, r.channel, r.event_name])).toEqual([
      [1, 'failed', 'sms', 'verify_otp'], [2, 'failed', 'sms', 'verify_otp'], [3, 'sent', 'sms', 'verify_otp'],
    ]);
    expect(new Set(rows.map((r) => r.job_id)).size).toBe(1);
    expect(JSON.stringify(rows)).not.toContain(code);
  }, 60_000);

  if (mode === 'split') {
    it('the notifications worker is down while a code is requested: the SMS arrives once after it is back, exactly once', async () => {
      await d.stopProcess('notifications');
      const number = phone();
      const res = ok(await call(d, 'rest', 'signup', { phone_number: number, password: PASSWORD, confirm_password: PASSWORD }));
      expect(res.body.message).toBe(PHONE_SIGNUP);
      await sleep(2000);
      expect(sink.to(number)).toEqual([]);
      await d.startProcess('notifications');
      const code = sink.otpOf(await sink.waitForSms(number, { timeoutMs: 60_000 }));
      await sleep(3000);
      expect(sink.to(number)).toHaveLength(1);
      expect(ok(await call(d, 'rest', 'verify_otp', { otp: code }, mfaOf(res.cookies))).body.message).toBe('OTP verified successfully.');
    }, 120_000);
  }
});

describe.each(['all', 'split'] as Mode[])('SMS OTP as a factor, the MFA gate on (%s)', (mode) => {
  let sink: TwilioSink;
  let d: Deployment;
  beforeAll(async () => {
    sink = await startTwilioSink();
    d = await startDeployment(mode, { mfa: true, flags: sink.flags() });
  }, 120_000);
  afterAll(async () => {
    closeGrpcClients();
    await d?.stop();
    await sink?.close();
  });

  it('enrolment from the offer (sms_otp_mfa_setup), then the G3 challenge at login by SMS, on REST, GraphQL and gRPC', async () => {
    const number = phone();
    // phone verification is off: the phone is verified at creation, and the gate offers SMS OTP (§4.1 G7)
    const offer = await post(d.url, '/v1/signup', { phone_number: number, password: PASSWORD, confirm_password: PASSWORD });
    expect(offer.body).toMatchObject({ message: 'Proceed to mfa setup', access_token: null, should_offer_sms_otp_mfa_setup: true, should_offer_email_otp_mfa_setup: false });
    const mfa = mfaOf(offer.cookies);
    const setup = await post(d.url, '/v1/sms_otp_mfa_setup', { phone_number: number }, { cookie: mfa });
    expect(setup).toMatchObject({ status: 200, body: { message: 'Check your phone for the verification code' } });
    const code = sink.otpOf(await sink.waitForSms(number));
    const enrolled = await post(d.url, '/v1/verify_otp', { otp: code, phone_number: number }, { cookie: mfa });
    expect(enrolled.body).toMatchObject({ message: 'OTP verified successfully.', user: { phone_number: number, enrolled_mfa_methods: ['sms_otp'] } });
    expect(decodeJwt(String(enrolled.body.id_token)).amr).toEqual(expect.arrayContaining(['pwd', 'sms', 'mfa']));

    // G3: the next login texts a code (the enrolment code was used, so a new one goes at once)
    const challenged = ok(await call(d, 'graphql', 'login', { phone_number: number, password: PASSWORD }));
    expect(challenged.body).toMatchObject({ message: 'Please check text message for the OTP', should_show_mobile_otp_screen: true, access_token: null, user: null });
    const gate = mfaOf(challenged.cookies);
    expect(await post(d.url, '/v1/lock_mfa', {}, { cookie: gate })).toMatchObject({
      status: 400, body: { code: 'failed_precondition', message: 'a verified email or SMS OTP fallback is available — use it instead of locking your account' },
    });
    const second = sink.otpOf(await sink.waitForSms(number, { count: 2 }));
    expect(await call(d, 'grpc', 'verify_otp', { otp: wrong(second) }, gate)).toMatchObject({ ok: false, ...INVALID_OTP });
    const done = ok(await call(d, 'grpc', 'verify_otp', { otp: second }, gate));
    expect(done.body).toMatchObject({ message: 'OTP verified successfully.', access_token: expect.any(String) });
    expect(sink.to(number)).toHaveLength(2);
  }, 60_000);

  it('Meta reports SMS OTP (usable and served)', async () => {
    const meta = await fetch(`${d.url}/v1/meta`).then((r) => r.json() as Promise<Record<string, unknown>>);
    expect(meta).toMatchObject({ is_sms_otp_mfa_enabled: true, is_multi_factor_auth_enabled: true });
  });
});

describe('without Twilio (all)', () => {
  let d: Deployment;
  beforeAll(async () => {
    d = await startDeployment('all');
  }, 60_000);
  afterAll(async () => {
    await d?.stop();
  });

  it('forgot_password by phone answers SMS service not enabled; phone signup issues tokens (phone verified at creation)', async () => {
    expect(await post(d.url, '/v1/forgot_password', { phone_number: phone() }))
      .toMatchObject({ status: 400, body: { code: 'failed_precondition', message: 'SMS service not enabled' } });
    const number = phone();
    // phone verification is off: the phone is verified at creation and the password logs in
    const s = await post(d.url, '/v1/signup', { phone_number: number, password: PASSWORD, confirm_password: PASSWORD });
    expect(s.body).toMatchObject({ message: 'Signed up successfully.', user: { phone_number_verified: true } });
  });
});

describe('startup rule (behaviour.md §1.4), through the binary', () => {
  it('--enable-phone-verification without all four --twilio-* flags: FATAL line, exit 1', async () => {
    const [http, grpc, metrics] = [await freePort(), await freePort(), await freePort()];
    const r = await runGatehouse('all', [
      '--host=127.0.0.1', `--url=http://127.0.0.1:${http}`, '--admin-secret=an-admin-secret-of-at-least-32-characters',
      '--client-id=sms-client', '--client-secret=sms-secret', '--database-type=sqlite', '--database-url=:memory:',
      '--jwt-type=HS256', '--jwt-secret=sms-jwt-secret', `--http-port=${http}`, `--grpc-port=${grpc}`, `--metrics-port=${metrics}`,
      '--enable-phone-verification', `--twilio-account-sid=${TWILIO_TEST_CREDENTIALS.accountSid}`, `--twilio-api-key=${TWILIO_TEST_CREDENTIALS.apiKey}`,
      `--twilio-sender=${TWILIO_TEST_CREDENTIALS.sender}`, '--twilio-api-url=http://127.0.0.1:9',
    ], 30_000);
    expect(r.stderr.split('\n')).toContain(
      'FATAL: --enable-phone-verification requires SMS (--twilio-account-sid, --twilio-api-key, --twilio-api-secret, --twilio-sender)');
    expect(r.code).toBe(1);
  }, 40_000);
});
