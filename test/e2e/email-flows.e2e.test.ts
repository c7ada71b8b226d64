/**
 * @module test/e2e/email-flows
 * The emailed-link flows end to end in both modes (behaviour.md §3.2, §3.4, §3.5, §5.5, §10): a real
 * SMTP sink receives the mails the notifications worker sends, and the tests follow the links. Also
 * all-in-one on MongoDB as the main database (FerretDB v1: the single-document outbox, issue 23).
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { decodeJwt } from 'jose';
import { createCallContext, createGrpcClient, serviceDescriptor } from '@gatehouse/rpc';
import { startDeployment, startSmtpSink, type Deployment, type Mode, type SmtpSink } from '@gatehouse/testing';
import type { DatabaseType } from '@gatehouse/db';
import { NEW_PASSWORD, PASSWORD, address, bearer, cookieHeader, emailFlags, get, post, signup, sleep } from './email-support.ts';

const VERIFY_SENT = 'Verification email has been sent. Please check your inbox';
const MAGIC_SENT = "If an account exists for this email, a magic link has been sent. Please check your inbox. If you don't receive it within a few minutes, double-check the email address for typos.";
const RESET_SENT = "If an account exists for this email, a password reset link has been sent. Please check your inbox. If you don't receive it within a few minutes, double-check the email address for typos.";
const RESENT = "If a verification is pending for this email, a new link has been sent. Please check your inbox. If you don't receive it within a few minutes, double-check the email address for typos.";
const INVALID_TOKEN = { code: 'invalid_argument', message: 'invalid verification token' };

/** each mode on its default database (SQLite all-in-one, PostgreSQL split), and all-in-one on MongoDB */
const CASES: Array<[Mode, DatabaseType | 'default']> = [['all', 'default'], ['split', 'default'], ['all', 'mongodb']];

describe.each(CASES)('email flows (%s, %s database)', (mode, database) => {
  let sink: SmtpSink;
  let d: Deployment;
  let resendUser: string;
  let resendSignupAt: number;

  beforeAll(async () => {
    sink = await startSmtpSink();
    d = await startDeployment(mode, { flags: emailFlags(sink), ...(database === 'default' ? {} : { database }) });
    // signed up first, so the 60 s resend window has passed when the last test runs
    resendUser = address('resend');
    resendSignupAt = Date.now();
    expect((await signup(d.url, resendUser)).status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
    await sink?.close();
  });

  const tokenOf = async (email: string, count = 1): Promise<{ link: URL; token: string }> => {
    const link = sink.tokenLink(await sink.waitForMail(email, { count }));
    return { link, token: link.searchParams.get('token')! };
  };

  it('meta reports the email features the flags turned on', async () => {
    const res = await fetch(`${d.url}/v1/meta`);
    expect(res.status).toBe(200);
    const meta = (await res.json()) as Record<string, unknown>;
    expect(meta).toMatchObject({ is_email_verification_enabled: true, is_magic_link_login_enabled: true, is_sign_up_enabled: true });
    const gql = await fetch(`${d.url}/graphql`, {
      method: 'POST', headers: { 'content-type': 'application/json', origin: d.url },
      body: JSON.stringify({ query: '{ meta { is_email_verification_enabled is_magic_link_login_enabled } }' }),
    });
    expect(await gql.json()).toEqual({ data: { meta: { is_email_verification_enabled: true, is_magic_link_login_enabled: true } } });
  });

  it('signup with verification mails a link; following it logs in with a 302, cookies and working tokens', async () => {
    const email = address('ada');
    const r = await signup(d.url, email);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ message: VERIFY_SENT, access_token: null, id_token: null, user: null });
    expect(r.cookies).toEqual([]);
    const mail = await sink.waitForMail(email);
    expect(mail.subject).toBe('Please verify your email');
    expect(mail.from).toContain('noreply@gatehouse.test');
    const link = sink.tokenLink(mail);
    expect(`${link.origin}${link.pathname}`).toBe(`${d.url}/verify_email`);
    expect(link.searchParams.get('redirect_uri')).toBe(`${d.url}/app`);

    const head = await fetch(`${d.url}${link.pathname}${link.search}`, { method: 'HEAD', redirect: 'manual' });
    expect([head.status, head.headers.getSetCookie()]).toEqual([200, []]);
    const followed = await get(d.url, `${link.pathname}${link.search}`);
    expect(followed.status).toBe(302);
    const to = new URL(followed.headers.get('location')!);
    expect(`${to.origin}${to.pathname}`).toBe(`${d.url}/app`);
    expect(to.searchParams.get('token_type')).toBe('bearer');
    expect(Number(to.searchParams.get('expires_in'))).toBeGreaterThan(0);
    expect(to.searchParams.has('state')).toBe(false);
    expect(to.searchParams.has('refresh_token')).toBe(false);
    const access = to.searchParams.get('access_token')!;
    expect(decodeJwt(access)).toMatchObject({ token_type: 'access_token', iss: d.url });
    expect(decodeJwt(to.searchParams.get('id_token')!)).toMatchObject({ token_type: 'id_token', email, email_verified: true });
    expect(followed.cookies.map((c) => c.split('=')[0])).toEqual(expect.arrayContaining(['cookie_session', 'cookie_session_domain']));

    expect((await get(d.url, '/v1/profile', bearer(access))).body).toMatchObject({ email, email_verified: true });
    expect((await get(d.url, '/v1/profile', cookieHeader(followed.cookies))).body).toMatchObject({ email });
    expect((await post(d.url, '/v1/login', { email, password: PASSWORD })).status).toBe(200);

    // single use: the link again, and the token through the API
    const again = new URL((await get(d.url, `${link.pathname}${link.search}`)).headers.get('location')!);
    expect(Object.fromEntries(again.searchParams)).toEqual({ error: 'invalid_argument', error_description: 'invalid verification token' });
    const reused = await post(d.url, '/v1/verify_email', { token: link.searchParams.get('token') });
    expect(reused.status).toBe(400);
    expect(reused.body).toEqual(INVALID_TOKEN);
  });

  it('verify_email over REST, GraphQL and native gRPC redeems the mailed token and opens a session', async () => {
    const viaRest = address('rest');
    const viaGql = address('gql');
    const viaGrpc = address('grpc');
    await signup(d.url, viaRest);
    await signup(d.url, viaGql);
    await signup(d.url, viaGrpc);
    const rest = await post(d.url, '/v1/verify_email', { token: (await tokenOf(viaRest)).token });
    expect(rest.status).toBe(200);
    expect(rest.body).toMatchObject({ message: 'Email verified successfully.', user: { email: viaRest, email_verified: true } });
    expect((await get(d.url, '/v1/profile', cookieHeader(rest.cookies))).body.email).toBe(viaRest);
    const gql = await post(d.url, '/graphql', {
      query: 'mutation verify($params: VerifyEmailRequest!) { verify_email(params: $params) { message access_token user { email email_verified } } }',
      variables: { params: { token: (await tokenOf(viaGql)).token } },
    });
    expect(gql.body.errors).toBeUndefined();
    expect(gql.body.data.verify_email).toMatchObject({ message: 'Email verified successfully.', user: { email: viaGql, email_verified: true } });
    expect((await get(d.url, '/v1/profile', bearer(gql.body.data.verify_email.access_token))).status).toBe(200);
    const bad = await post(d.url, '/graphql', { query: 'mutation { verify_email(params: {token: "nope"}) { message } }' });
    expect(bad.body.errors[0]).toMatchObject({ message: 'invalid verification token', extensions: { code: 'INVALID_ARGUMENT' } });
    const client = createGrpcClient(serviceDescriptor('authn'), { address: d.grpcAddress });
    try {
      const ctx = createCallContext({ headers: {}, protocol: 'grpc' });
      const res = await client.call('VerifyEmail', { token: (await tokenOf(viaGrpc)).token }, ctx);
      expect(res).toMatchObject({ message: 'Email verified successfully.', user: { email: viaGrpc, email_verified: true } });
      expect(ctx.setCookies.map((c) => c.split('=')[0])).toContain('cookie_session');
      await expect(client.call('VerifyEmail', { token: 'nope' }, createCallContext({ headers: {}, protocol: 'grpc' }))).rejects.toMatchObject(INVALID_TOKEN);
    } finally {
      client.close();
    }
  });

  it('magic link: mailed with state and scope, the link logs in with a refresh token', async () => {
    const email = address('magic');
    const r = await post(d.url, '/v1/magic_link_login', { email, state: 'st-1', scope: ['openid', 'email', 'offline_access'] });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ message: MAGIC_SENT });
    const { link } = await tokenOf(email);
    expect(link.searchParams.get('state')).toBe('st-1');
    const followed = await get(d.url, `${link.pathname}${link.search}`);
    expect(followed.status).toBe(302);
    const to = new URL(followed.headers.get('location')!);
    expect(to.searchParams.get('state')).toBe('st-1');
    expect(to.searchParams.get('refresh_token')).toEqual(expect.any(String));
    const profile = await get(d.url, '/v1/profile', bearer(to.searchParams.get('access_token')!));
    expect(profile.body).toMatchObject({ email, email_verified: true, signup_methods: 'magic_link_login' });
    expect(decodeJwt(to.searchParams.get('access_token')!).login_method).toBe('magic_link_login');
  });

  it('forgot → reset: old sessions refused, the new password works and the old one does not', async () => {
    const email = address('reset');
    await signup(d.url, email);
    const verified = await post(d.url, '/v1/verify_email', { token: (await tokenOf(email)).token });
    const login = await post(d.url, '/v1/login', { email, password: PASSWORD });
    expect(login.status).toBe(200);
    const forgot = await post(d.url, '/v1/forgot_password', { email });
    expect(forgot.body).toEqual({ message: RESET_SENT, should_show_mobile_otp_screen: false });
    const mail = await sink.waitForMail(email, { count: 2 });
    expect(mail.subject).toBe('Reset Password');
    const link = sink.tokenLink(mail);
    expect(`${link.origin}${link.pathname}`).toBe(`${d.url}/app/reset-password`);
    const token = link.searchParams.get('token')!;
    const reset = await post(d.url, '/v1/reset_password', { token, password: NEW_PASSWORD, confirm_password: NEW_PASSWORD });
    expect(reset.status).toBe(200);
    expect(reset.body).toEqual({ message: 'Password updated successfully.' });
    expect(reset.cookies).toEqual([]);
    expect((await get(d.url, '/v1/profile', bearer(verified.body.access_token))).status).toBe(401);
    expect((await get(d.url, '/v1/profile', cookieHeader(login.cookies))).status).toBe(401);
    expect((await post(d.url, '/v1/login', { email, password: PASSWORD })).body).toEqual({ code: 'unauthenticated', message: 'invalid credentials' });
    expect((await post(d.url, '/v1/login', { email, password: NEW_PASSWORD })).status).toBe(200);
    const again = await post(d.url, '/v1/reset_password', { token, password: NEW_PASSWORD, confirm_password: NEW_PASSWORD });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ code: 'invalid_argument', message: 'invalid token' });
  });

  it('forgot_password for an unknown address answers like a known one and sends nothing; a duplicate signup sends nothing', async () => {
    const known = address('known');
    const unknown = address('unknown');
    await signup(d.url, known);
    await sink.waitForMail(known);
    const k = await post(d.url, '/v1/forgot_password', { email: known });
    const u = await post(d.url, '/v1/forgot_password', { email: unknown });
    expect(u.status).toBe(k.status);
    expect(u.body).toEqual(k.body);
    const dup = await signup(d.url, known);
    expect(dup.body).toMatchObject({ message: VERIFY_SENT, access_token: null, user: null });
    await sink.waitForMail(known, { count: 2 });
    await sleep(2000);
    expect(sink.to(unknown)).toEqual([]);
    expect(sink.to(known).map((m) => m.subject)).toEqual(['Please verify your email', 'Reset Password']);
  });

  it('update_profile email change: the new address is unverified until its update_email link is followed', async () => {
    const email = address('old');
    const next = address('new');
    await signup(d.url, email);
    const v = await post(d.url, '/v1/verify_email', { token: (await tokenOf(email)).token });
    const r = await post(d.url, '/v1/update_profile', { email: next }, bearer(v.body.access_token));
    expect(r.body).toEqual({ message: 'Profile details updated successfully. For the email change we have sent new verification email, please verify and continue' });
    expect((await get(d.url, '/v1/profile', bearer(v.body.access_token))).status).toBe(401);
    const { link } = await tokenOf(next);
    // behaviour.md §3.3 step 8: with SMTP configured, the unverified address gets a code instead (test/e2e/mfa-otp)
    expect((await post(d.url, '/v1/login', { email: next, password: PASSWORD })).body).toMatchObject({ message: 'Please check email inbox for the OTP', access_token: null });
    expect((await sink.waitForMail(next, { count: 2 })).subject).toBe('OTP for your multi factor authentication');
    const followed = await get(d.url, `${link.pathname}${link.search}`);
    const access = new URL(followed.headers.get('location')!).searchParams.get('access_token')!;
    expect((await get(d.url, '/v1/profile', bearer(access))).body).toMatchObject({ email: next, email_verified: true });
    expect((await post(d.url, '/v1/login', { email: next, password: PASSWORD })).status).toBe(200);
  });

  it('bad input is 400 invalid_argument and queues nothing', async () => {
    const before = sink.messages.length;
    const cases: Array<[string, unknown, string]> = [
      ['/v1/magic_link_login', { email: 'not an email' }, 'invalid email address'],
      ['/v1/magic_link_login', { email: `${'a'.repeat(320)}@example.com` }, 'email must be at most 320 characters'],
      ['/v1/forgot_password', { email: 'a@@example.com' }, 'invalid email address'],
      ['/v1/resend_verify_email', { email: 'a@example.com', identifier: 'nope' }, 'invalid identifier'],
      ['/v1/resend_verify_email', { email: 'bad', identifier: 'basic_auth_signup' }, 'invalid email address'],
      ['/v1/reset_password', { password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }, 'token or otp is required'],
      ['/v1/signup', { email: 'x@example.com', password: PASSWORD, confirm_password: PASSWORD, state: 's'.repeat(5000) }, 'state must be at most 2048 characters'],
    ];
    for (const [path, body, message] of cases) {
      const r = await post(d.url, path, body);
      expect([path, r.status, r.body]).toEqual([path, 400, { code: 'invalid_argument', message }]);
    }
    const typed = await post(d.url, '/v1/verify_email', { token: 42 });
    expect(typed.status).toBe(400);
    expect(typed.body.code).toBe('invalid_argument');
    await sleep(1000);
    expect(sink.messages.length).toBe(before);
  });

  it('resend: nothing within 60 s, then a new link that replaces the previous one', async () => {
    const first = await tokenOf(resendUser);
    const early = await post(d.url, '/v1/resend_verify_email', { email: resendUser, identifier: 'basic_auth_signup' });
    expect(early.body).toEqual({ message: RESENT });
    await sleep(Math.max(0, resendSignupAt + 61_000 - Date.now()));
    expect(sink.to(resendUser)).toHaveLength(1);
    const late = await post(d.url, '/v1/resend_verify_email', { email: resendUser, identifier: 'basic_auth_signup' });
    expect(late.body).toEqual({ message: RESENT });
    const second = await tokenOf(resendUser, 2);
    expect(second.token).not.toBe(first.token);
    expect((await post(d.url, '/v1/verify_email', { token: first.token })).body).toEqual(INVALID_TOKEN);
    expect((await post(d.url, '/v1/verify_email', { token: second.token })).status).toBe(200);
  }, 120_000);
});
