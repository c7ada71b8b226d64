/**
 * @module test/e2e/send-caps
 * Send caps end to end (issue 30 §2): concurrent requests inside the resend window send exactly one
 * message (counted in the real Twilio and SMTP stand-ins), the per-address cap holds across authn
 * replicas and answers an unknown address exactly like a known one, and a number outside
 * `--sms-allowed-country-codes` is refused without a send. All-in-one on SQLite, and split mode on
 * PostgreSQL + Redis with two authn and two mfa replicas (requests spread over both).
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { startDeployment, startSmtpSink, startTwilioSink, type Deployment, type Mode, type SmtpSink, type StartOptions, type TwilioSink } from '@gatehouse/testing';
import { closeGrpcClients, grpcRpc, type Result } from '../support/surfaces.ts';
import { PASSWORD, post, sleep } from './email-support.ts';

const SETUPS: Array<{ mode: Mode; options: StartOptions }> = [
  { mode: 'all', options: {} },
  { mode: 'split', options: { authnReplicas: 2, mfaReplicas: 2 } },
];
const CAP = { code: 'resource_exhausted', message: 'too many messages to this destination, please try again later' };

const phone = (cc = '+1555'): string => `${cc}${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
const email = (tag: string): string => `${tag}-${Math.random().toString(36).slice(2, 10)}@example.com`;

async function rest(base: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Result & { retryAfter: string | null }> {
  const r = await post(base, path, body, headers);
  const retryAfter = r.headers.get('retry-after');
  return r.status === 200
    ? { ok: true, body: r.body, cookies: r.cookies, status: r.status, retryAfter }
    : { ok: false, code: r.body?.code, message: r.body?.message, cookies: r.cookies, status: r.status, retryAfter };
}

/** The answer without what differs per call anyway (cookies). */
const shape = (r: Result): unknown => (r.ok ? { ok: true, body: r.body } : { ok: false, code: r.code, message: r.message });

describe.each(SETUPS)('send caps ($mode)', ({ mode, options }) => {
  let twilio: TwilioSink;
  let smtp: SmtpSink;
  let d: Deployment;

  beforeAll(async () => {
    [twilio, smtp] = await Promise.all([startTwilioSink(), startSmtpSink()]);
    d = await startDeployment(mode, {
      ...options, readyTimeoutMs: 180_000,
      // email verification stays off: a signup mails nothing, so a known and an unknown address start even
      flags: [...twilio.flags(), `--smtp-host=${smtp.host}`, `--smtp-port=${smtp.port}`, '--smtp-sender-email=noreply@gatehouse.test',
        '--skip-tls-verification', '--enable-phone-verification', '--enable-magic-link-login',
        '--send-cap-per-hour=2', '--sms-allowed-country-codes=+1,+44'],
    });
  }, 420_000);
  afterAll(async () => {
    closeGrpcClients();
    await d?.stop();
    await Promise.all([twilio?.close(), smtp?.close()]);
  });

  const authnTargets = (): Array<{ url: string; grpcAddress: string }> =>
    [d.grpcAddress, ...d.authnGrpcAddresses].map((grpcAddress) => ({ url: d.url, grpcAddress }));

  it('20 concurrent forgot_password by phone inside the window (over every replica) send exactly one SMS', async () => {
    const number = phone();
    const signup = await rest(d.url, '/v1/signup', { phone_number: number, password: PASSWORD, confirm_password: PASSWORD });
    const cookie = signup.cookies.find((c) => c.startsWith('mfa=') && !c.startsWith('mfa=;'))!.split(';')[0]!;
    const code = twilio.otpOf(await twilio.waitForSms(number));
    // the verified code ends its window, so the next flow may text at once (§4.4 "while a code is live")
    expect((await rest(d.url, '/v1/verify_otp', { otp: code, phone_number: number }, { cookie })).ok).toBe(true);
    const targets = authnTargets();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => i % 2 === 0
      ? rest(d.url, '/v1/forgot_password', { phone_number: number })
      : grpcRpc(targets[i % targets.length]!, 'ForgotPassword', { phone_number: number })));
    expect(results.every((r) => r.ok)).toBe(true);
    await twilio.waitForSms(number, { count: 2 });
    await sleep(2000);
    expect(twilio.to(number)).toHaveLength(2);
  }, 120_000);

  it('20 concurrent resend_otp inside the window of the signup code send nothing more: each is 429 with Retry-After', async () => {
    const number = phone();
    const signup = await rest(d.url, '/v1/signup', { phone_number: number, password: PASSWORD, confirm_password: PASSWORD });
    const cookie = signup.cookies.find((c) => c.startsWith('mfa=') && !c.startsWith('mfa=;'))!.split(';')[0]!;
    await twilio.waitForSms(number);
    const early = await Promise.all(Array.from({ length: 20 }, () => rest(d.url, '/v1/resend_otp', { phone_number: number }, { cookie })));
    expect(early.every((r) => !r.ok && r.code === 'resource_exhausted' && r.message === 'please wait before requesting another OTP' && Number(r.retryAfter) > 0)).toBe(true);
    expect(twilio.to(number)).toHaveLength(1);
  }, 60_000);

  it('the per-address cap (2 an hour here) holds across replicas, and an unknown address is answered exactly like a known one', async () => {
    const known = email('cap-known');
    expect((await rest(d.url, '/v1/signup', { email: known, password: PASSWORD, confirm_password: PASSWORD })).ok).toBe(true);
    const unknown = email('cap-unknown');
    const [a, b] = authnTargets().slice(-2);
    const run = async (to: string): Promise<unknown[]> => [
      // three purposes, so the 60 s interval of each lets its message through: the cap alone decides
      shape(await rest(d.url, '/v1/forgot_password', { email: to })),
      shape(await grpcRpc(b ?? a!, 'MagicLinkLogin', { email: to })),
      shape(await grpcRpc(a!, 'ResendVerifyEmail', { email: to, identifier: 'update_email' })),
      shape(await rest(d.url, '/v1/forgot_password', { email: to })),
    ];
    const knownAnswers = await run(known);
    const unknownAnswers = await run(unknown);
    // two sends, then the cap; the 4th repeats a purpose inside its 60 s interval: silently nothing
    expect(knownAnswers.map((r) => (r as { ok: boolean }).ok)).toEqual([true, true, false, true]);
    expect(knownAnswers[2]).toEqual({ ok: false, ...CAP });
    expect(unknownAnswers).toEqual(knownAnswers);
    const capped = await rest(d.url, '/v1/resend_verify_email', { email: known, identifier: 'basic_auth_signup' });
    expect(capped).toMatchObject({ ok: false, ...CAP, status: 429 });
    expect(Number(capped.retryAfter)).toBeGreaterThan(3000);
  }, 90_000);

  it('a number outside --sms-allowed-country-codes is refused without a send, known or not', async () => {
    const number = phone('+88216');
    const signup = await rest(d.url, '/v1/signup', { phone_number: number, password: PASSWORD, confirm_password: PASSWORD });
    expect(signup).toMatchObject({ ok: false, code: 'failed_precondition', message: 'sending SMS to this country is not allowed', status: 400 });
    expect(await rest(d.url, '/v1/forgot_password', { phone_number: number })).toMatchObject({ ok: false, code: 'failed_precondition', message: 'sending SMS to this country is not allowed' });
    // the account was never created: a login finds nothing
    expect(await rest(d.url, '/v1/login', { phone_number: number, password: PASSWORD })).toMatchObject({ ok: false, code: 'unauthenticated' });
    await sleep(1000);
    expect(twilio.to(number)).toHaveLength(0);
  }, 60_000);
});
