/**
 * @module test/e2e/mfa-otp
 * Login of an unverified email with SMTP configured, end to end in both modes (behaviour.md §3.3
 * step 8, §4.2–§4.4): authn asks the mfa service to open an MFA session, the notifications worker
 * mails the code to a real SMTP sink, and verify_otp (REST, GraphQL, gRPC) completes the login.
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { decodeJwt } from 'jose';
import { createCallContext, createGrpcClient, serviceDescriptor } from '@gatehouse/rpc';
import { startDeployment, startSmtpSink, type Deployment, type Mode, type SmtpSink } from '@gatehouse/testing';
import { PASSWORD, address, bearer, cookieHeader, emailFlags, get, post, signup } from './email-support.ts';

const OTP_SCREEN = 'Please check email inbox for the OTP';
const INVALID_SESSION = { code: 'unauthenticated', message: 'invalid session' };

describe.each(['all', 'split'] as Mode[])('email OTP at login (%s)', (mode) => {
  let sink: SmtpSink;
  let d: Deployment;

  beforeAll(async () => {
    sink = await startSmtpSink();
    d = await startDeployment(mode, { flags: emailFlags(sink) });
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
    await sink?.close();
  });

  /** signs up `tag`@… (verification on: no tokens) and logs in with the password: the OTP screen and its mfa cookie */
  const loginUnverified = async (tag: string): Promise<{ email: string; mfa: { cookie: string }; code: string; login: Awaited<ReturnType<typeof post>> }> => {
    const email = address(tag);
    expect((await signup(d.url, email)).status).toBe(200);
    // the account is written after signup's answer (issue 30 §6): its verification mail shows it exists
    await sink.waitForMail(email);
    const login = await post(d.url, '/v1/login', { email, password: PASSWORD, scope: ['openid', 'email', 'offline_access'], state: 'st-1' });
    // the verification link comes first, then the code
    const mail = await sink.waitForMail(email, { count: 2 }).then(() => sink.to(email).find((m) => m.subject === 'OTP for your multi factor authentication'));
    expect(mail).toBeDefined();
    return { email, mfa: cookieHeader(login.cookies), code: sink.otpOf(mail!), login };
  };

  it('login mails a code and withholds tokens; verify_otp with it logs in, verifies the email and ends the MFA session (REST)', async () => {
    const { email, mfa, code, login } = await loginUnverified('otp');
    expect(login.status).toBe(200);
    expect(login.body).toMatchObject({
      message: OTP_SCREEN, should_show_email_otp_screen: true, should_show_mobile_otp_screen: false,
      access_token: null, id_token: null, refresh_token: null, expires_in: null, user: null,
    });
    expect(login.cookies).toHaveLength(1);
    expect(login.cookies[0]).toMatch(/^mfa=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=300; HttpOnly; SameSite=Lax$/);

    const verified = await post(d.url, '/v1/verify_otp', { otp: code.toLowerCase(), email }, mfa);
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ message: 'OTP verified successfully.', user: { email, email_verified: true } });
    expect(decodeJwt(verified.body.access_token)).toMatchObject({ login_method: 'basic_auth', scope: ['openid', 'email', 'offline_access'] });
    expect(verified.body.refresh_token).toEqual(expect.any(String));
    expect(verified.cookies).toEqual(expect.arrayContaining([
      'mfa=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax', expect.stringMatching(/^cookie_session=[^;]+;/), expect.stringMatching(/^cookie_session_domain=[^;]+;/),
    ]));
    const profile = await get(d.url, '/v1/profile', cookieHeader(verified.cookies));
    expect(profile.body).toMatchObject({ email, email_verified: true });
    // single use, and the password alone now logs in
    expect((await post(d.url, '/v1/verify_otp', { otp: code }, mfa)).body).toEqual(INVALID_SESSION);
    expect((await post(d.url, '/v1/login', { email, password: PASSWORD })).body.message).toBe('Logged in successfully');
  });

  it('refuses wrong codes, early resends, missing sessions and TOTP with the behaviour.md codes', async () => {
    const { mfa, code } = await loginUnverified('refusals');
    const wrong = code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA';
    expect(await post(d.url, '/v1/verify_otp', { otp: wrong }, mfa)).toMatchObject({ status: 400, body: { code: 'invalid_argument', message: 'invalid otp' } });
    expect(await post(d.url, '/v1/verify_otp', { otp: code })).toMatchObject({ status: 401, body: INVALID_SESSION });
    expect(await post(d.url, '/v1/verify_otp', { otp: code, is_totp: true }, mfa))
      .toMatchObject({ status: 400, body: { code: 'failed_precondition', message: 'authenticator app is not set up for this account' } });
    expect(await post(d.url, '/v1/verify_otp', { otp: 42 }, mfa)).toMatchObject({ status: 400, body: { code: 'invalid_argument' } });
    const early = await post(d.url, '/v1/resend_otp', {}, mfa);
    expect(early).toMatchObject({ status: 429, body: { code: 'resource_exhausted', message: 'please wait before requesting another OTP' } });
    expect(Number(early.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await post(d.url, '/v1/resend_otp', {})).toMatchObject({ status: 401, body: INVALID_SESSION });
    // a contact verification is a challenge, not an offer: it cannot be skipped (behaviour.md §4.3)
    expect(await post(d.url, '/v1/skip_mfa_setup', {}, mfa)).toMatchObject({ status: 400, body: { code: 'failed_precondition', message: 'cannot skip multi factor authentication setup' } });
    // the wrong guess did not use the code up
    expect((await post(d.url, '/v1/verify_otp', { otp: code }, mfa)).body.message).toBe('OTP verified successfully.');
  });

  it('GraphQL verify_otp: cookies on the /graphql response, the user\'s fields resolved from authn', async () => {
    const { email, mfa, code } = await loginUnverified('graphql');
    const res = await fetch(`${d.url}/graphql`, {
      method: 'POST', headers: { 'content-type': 'application/json', origin: d.url, ...mfa },
      body: JSON.stringify({
        query: 'mutation verifyOtp($data: VerifyOTPRequest!) { verify_otp(params: $data) { message access_token should_show_email_otp_screen user { id email email_verified roles } } }',
        variables: { data: { otp: code } },
      }),
    });
    const body = (await res.json()) as { data: { verify_otp: Record<string, any> } };
    expect(body).toEqual({ data: { verify_otp: {
      message: 'OTP verified successfully.', access_token: expect.any(String), should_show_email_otp_screen: false,
      user: { id: expect.any(String), email, email_verified: true, roles: ['user'] },
    } } });
    expect(res.headers.getSetCookie().map((c) => c.split('=')[0])).toEqual(expect.arrayContaining(['mfa', 'cookie_session', 'cookie_session_domain']));
    const resend = await fetch(`${d.url}/graphql`, {
      method: 'POST', headers: { 'content-type': 'application/json', origin: d.url, ...mfa },
      body: JSON.stringify({ query: 'mutation resendOtp($data: ResendOTPRequest!) { resend_otp(params: $data) { message } }', variables: { data: {} } }),
    });
    expect(await resend.json()).toMatchObject({ errors: [{ message: 'invalid session', extensions: { code: 'UNAUTHENTICATED' } }] });
  });

  it('native gRPC: AuthnService.VerifyOtp on the public port with the mfa cookie as metadata; the internal APIs are not exposed', async () => {
    const { email, mfa, code } = await loginUnverified('grpc');
    // verify_otp ends in a session, so authn serves it and asks mfa for the verdict (issue 14 §5)
    const client = createGrpcClient(serviceDescriptor('authn'), { address: d.grpcAddress });
    const internal = createGrpcClient(serviceDescriptor('mfa.internal'), { address: d.grpcAddress });
    try {
      const ctx = createCallContext({ headers: mfa, protocol: 'grpc' });
      const res = await client.call('VerifyOtp', { otp: code }, ctx);
      expect(res).toMatchObject({ message: 'OTP verified successfully.', user: { email, email_verified: true } });
      expect(ctx.setCookies.map((c) => c.split('=')[0])).toEqual(expect.arrayContaining(['mfa', 'cookie_session']));
      const again = await client.call('VerifyOtp', { otp: code }, createCallContext({ headers: mfa, protocol: 'grpc' })).catch((e: unknown) => e);
      expect(again).toMatchObject(INVALID_SESSION);
      // mfa's internal API (challenges for any user) is never served on the public port
      const forged = await internal.call('OpenOtpChallenge', { user: res.user, channel: 'email', purpose: 'login', login_method: 'basic_auth' }, createCallContext({ protocol: 'grpc' })).catch((e: unknown) => e);
      expect(forged).toMatchObject({ code: 'unimplemented' });
    } finally {
      client.close();
      internal.close();
    }
  });

  it('a verified address logs in directly, without a code or an mfa cookie', async () => {
    const email = address('verified');
    await signup(d.url, email);
    const token = sink.tokenLink(await sink.waitForMail(email)).searchParams.get('token')!;
    const v = await post(d.url, '/v1/verify_email', { token });
    expect((await get(d.url, '/v1/profile', bearer(v.body.access_token))).body).toMatchObject({ email_verified: true });
    const login = await post(d.url, '/v1/login', { email, password: PASSWORD });
    expect(login.body.message).toBe('Logged in successfully');
    expect(login.cookies.some((c) => c.startsWith('mfa='))).toBe(false);
  });
});
