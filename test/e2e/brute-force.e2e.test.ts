/**
 * @module test/e2e/brute-force
 * Counters that cannot be outrun (issue 30 §1; behaviour.md §3.3 step 3, §4.4, §4.5, §5.1, §10): 50
 * wrong attempts at a limited secret fired at once, as real parallel HTTP and gRPC requests, let
 * exactly the allowance through to the comparison (each compared attempt answers its own "wrong"
 * error; the rest are 429 before any comparison), and the right secret afterwards is still refused.
 * The secrets: the password, an SMS code, a TOTP code (otplib computes the right one from the secret
 * the server returned), a recovery code, and the admin secret. Email codes are verified by the same
 * code path and counter as SMS codes (services/mfa verify-otp.ts: the session's channel picks the
 * stored code, the lockout key is the user's), so they have no row of their own. SCIM tokens and
 * client secrets have no attempt limit in behaviour.md (§5, §6.4, §10), so they have none either.
 * Four deployments: all-in-one on SQLite; split mode on PostgreSQL + Redis with two authn and two
 * mfa replicas, the attempts spread over both (authn replica i calls mfa replica i); all-in-one on
 * MariaDB; all-in-one on MongoDB (FerretDB).
 */
import { randomUUID } from 'node:crypto';
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { generate } from 'otplib';
import { startDeployment, startTwilioSink, type Deployment, type Mode, type StartOptions, type TwilioSink } from '@gatehouse/testing';
import type { DatabaseType } from '@gatehouse/db';
import { closeGrpcClients, grpcRpc, type Result } from '../support/surfaces.ts';
import { PASSWORD, post } from './email-support.ts';

const N = 50;
const LOCKED = { code: 'resource_exhausted', message: 'too many failed attempts, please try again later' };

interface Setup { name: string; mode: Mode; database: DatabaseType; options: StartOptions }
const SETUPS: Setup[] = [
  { name: 'all-in-one on SQLite', mode: 'all', database: 'sqlite', options: {} },
  { name: 'split, PostgreSQL + Redis, 2 authn + 2 mfa', mode: 'split', database: 'postgres', options: { authnReplicas: 2, mfaReplicas: 2 } },
  { name: 'all-in-one on MariaDB', mode: 'all', database: 'mariadb', options: {} },
  { name: 'all-in-one on MongoDB (FerretDB)', mode: 'all', database: 'mongodb', options: {} },
];

const phone = (): string => `+1555${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
const email = (tag: string): string => `${tag}-${Math.random().toString(36).slice(2, 10)}@example.com`;
/** The `mfa=<handle>` pair of a response's Set-Cookie values. */
const mfaCookie = (cookies: readonly string[]): string => cookies.find((c) => c.startsWith('mfa=') && !c.startsWith('mfa=;'))!.split(';')[0]!;
/** The 6-digit TOTP code of `secret` at Unix second `at` (RFC 6238: SHA-1, 30 s steps), as an authenticator app shows it. */
const totpAt = (secret: string, at: number): Promise<string> => generate({ secret, epoch: Math.floor(at) });

/** A REST answer as a {@link Result}. */
async function rest(base: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Result & { retryAfter: string | null }> {
  const r = await post(base, path, body, headers);
  const retryAfter = r.headers.get('retry-after');
  return r.status === 200
    ? { ok: true, body: r.body, cookies: r.cookies, status: r.status, retryAfter }
    : { ok: false, code: r.body?.code, message: r.body?.message, cookies: r.cookies, status: r.status, retryAfter };
}

/** How many results carry each `code: message`. */
function tally(results: readonly Result[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of results) {
    const k = r.ok ? 'ok' : `${r.code}: ${r.message}`;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

describe.each(SETUPS)('brute force against a concurrent attacker ($name)', ({ mode, database, options }) => {
  let sink: TwilioSink;
  let d: Deployment;

  beforeAll(async () => {
    sink = await startTwilioSink();
    // mfa: the gate runs, so a user can enrol TOTP (its recovery codes come with it)
    d = await startDeployment(mode, { ...options, database, mfa: true, flags: [...sink.flags(), '--enable-phone-verification'], readyTimeoutMs: 180_000 });
  }, 420_000);
  afterAll(async () => {
    closeGrpcClients();
    await d?.stop();
    await sink?.close();
  });

  /** Each gRPC target of authn: the gateway's public port, and in split mode every authn replica directly. */
  const authnTargets = (): Array<{ url: string; grpcAddress: string }> =>
    [d.grpcAddress, ...d.authnGrpcAddresses].map((grpcAddress) => ({ url: d.url, grpcAddress }));

  it(`password login: ${N} concurrent wrong passwords → exactly 5 compared, ${N - 5} refused; then the right one is refused too`, async () => {
    const who = email('bf-login');
    expect((await rest(d.url, '/v1/signup', { email: who, password: PASSWORD, confirm_password: PASSWORD })).status).toBe(200);
    const targets = authnTargets();
    const attempts = Array.from({ length: N }, (_, i) => i % 2 === 0
      ? rest(d.url, '/v1/login', { email: who, password: `wrong-${i}` })
      : grpcRpc(targets[i % targets.length]!, 'Login', { email: who, password: `wrong-${i}` }));
    const results = await Promise.all(attempts);
    expect(tally(results)).toEqual({ 'unauthenticated: invalid credentials': 5, [`${LOCKED.code}: ${LOCKED.message}`]: N - 5 });
    const right = await rest(d.url, '/v1/login', { email: who, password: PASSWORD });
    expect(right).toMatchObject({ ok: false, ...LOCKED, status: 429 });
    expect(Number(right.retryAfter)).toBeGreaterThan(800);
    // an unknown identifier locks the same way (nothing to learn from the lockout)
    const ghost = await Promise.all(Array.from({ length: 20 }, () => rest(d.url, '/v1/login', { email: email('bf-ghost'), password: 'x' })));
    expect(ghost.every((r) => !r.ok && r.code === 'unauthenticated')).toBe(true);
  }, 120_000);

  it(`SMS code: ${N} concurrent wrong codes (over every authn and mfa replica) → exactly 5 compared; then the right code is refused`, async () => {
    const number = phone();
    const signup = await rest(d.url, '/v1/signup', { phone_number: number, password: PASSWORD, confirm_password: PASSWORD });
    expect(signup.ok).toBe(true);
    const cookie = mfaCookie(signup.cookies);
    const code = sink.otpOf(await sink.waitForSms(number));
    const wrong = code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA';
    const targets = authnTargets();
    const attempts = Array.from({ length: N }, (_, i) => i % 2 === 0
      ? rest(d.url, '/v1/verify_otp', { otp: wrong, phone_number: number }, { cookie })
      : grpcRpc(targets[i % targets.length]!, 'VerifyOtp', { otp: wrong, phone_number: number }, { cookie }));
    const results = await Promise.all(attempts);
    expect(tally(results)).toEqual({ 'invalid_argument: invalid otp': 5, [`${LOCKED.code}: ${LOCKED.message}`]: N - 5 });
    expect(await rest(d.url, '/v1/verify_otp', { otp: code, phone_number: number }, { cookie })).toMatchObject({ ok: false, ...LOCKED, status: 429 });
  }, 120_000);

  /**
   * Signs a fresh address up, enrols TOTP from the gate's offer (behaviour.md §4.1 G7, §4.5) and logs
   * in again: the G4 challenge's `mfa` cookie, the TOTP secret and the enrolment's recovery codes.
   */
  const totpChallenge = async (tag: string): Promise<{ cookie: string; secret: string; codes: string[] }> => {
    const who = email(tag);
    const offer = await rest(d.url, '/v1/signup', { email: who, password: PASSWORD, confirm_password: PASSWORD });
    expect(offer).toMatchObject({ ok: true, body: { message: 'Proceed to mfa setup', should_show_totp_screen: true } });
    if (!offer.ok) throw new Error('no TOTP offer');
    const secret = offer.body.authenticator_secret as string;
    const codes = offer.body.authenticator_recovery_codes as string[];
    const enrolled = await rest(d.url, '/v1/verify_otp', { otp: await totpAt(secret, Date.now() / 1000), is_totp: true }, { cookie: mfaCookie(offer.cookies) });
    expect(enrolled).toMatchObject({ ok: true, body: { message: 'OTP verified successfully.' } });
    const challenged = await rest(d.url, '/v1/login', { email: who, password: PASSWORD });
    expect(challenged).toMatchObject({ ok: true, body: { message: 'Proceed to mfa verification', should_show_totp_screen: true } });
    return { cookie: mfaCookie(challenged.cookies), secret, codes };
  };

  /** `otp` with `is_totp` N times at once, half over REST and half over gRPC (every authn replica). */
  const totpAttempts = (cookie: string, otp: (i: number) => string): Promise<Result[]> => {
    const targets = authnTargets();
    return Promise.all(Array.from({ length: N }, (_, i) => i % 2 === 0
      ? rest(d.url, '/v1/verify_otp', { otp: otp(i), is_totp: true }, { cookie })
      : grpcRpc(targets[i % targets.length]!, 'VerifyOtp', { otp: otp(i), is_totp: true }, { cookie })));
  };

  it(`TOTP code: ${N} concurrent wrong codes → exactly 5 compared; then the authenticator's right code is refused`, async () => {
    const { cookie, secret } = await totpChallenge('bf-totp');
    const now = Date.now() / 1000;
    // a code no step of the ±1 window (§4.5) takes, so every attempt is wrong
    const window = new Set(await Promise.all([-30, 0, 30, 60].map((dt) => totpAt(secret, now + dt))));
    const wrong = ['000000', '111111', '222222', '333333', '444444'].find((c) => !window.has(c))!;
    const results = await totpAttempts(cookie, () => wrong);
    expect(tally(results)).toEqual({ 'invalid_argument: invalid otp': 5, [`${LOCKED.code}: ${LOCKED.message}`]: N - 5 });
    // the next step's code: inside the ±1 window and after the enrolment's step, so not a replay
    const right = await rest(d.url, '/v1/verify_otp', { otp: await totpAt(secret, Date.now() / 1000 + 30), is_totp: true }, { cookie });
    expect(right).toMatchObject({ ok: false, ...LOCKED, status: 429 });
    expect(Number(right.retryAfter)).toBeGreaterThan(800);
  }, 120_000);

  it(`recovery code: ${N} concurrent wrong recovery codes → exactly 5 compared; then an unused recovery code is refused`, async () => {
    const { cookie, codes } = await totpChallenge('bf-recovery');
    expect(codes).toHaveLength(10);
    const results = await totpAttempts(cookie, () => randomUUID());
    expect(tally(results)).toEqual({ 'invalid_argument: invalid otp': 5, [`${LOCKED.code}: ${LOCKED.message}`]: N - 5 });
    const right = await rest(d.url, '/v1/verify_otp', { otp: codes[0], is_totp: true }, { cookie });
    expect(right).toMatchObject({ ok: false, ...LOCKED, status: 429 });
  }, 120_000);

  // last: it locks the test's own address out of the admin secret for the rest of the window
  it(`admin secret: ${N} concurrent wrong secrets on admin login and the header → exactly 10 compared; then the right secret is refused`, async () => {
    const attempts = Array.from({ length: N }, (_, i) => i % 2 === 0
      ? rest(d.url, '/v1/admin/login', { admin_secret: `wrong-${i}` })
      : rest(d.url, '/v1/admin/users', {}, { 'x-service-admin-secret': `wrong-${i}` }));
    const results = await Promise.all(attempts);
    const counts = tally(results);
    const compared = (counts['unauthenticated: invalid admin secret'] ?? 0) + (counts['unauthenticated: unauthorized'] ?? 0);
    expect({ compared, locked: counts[`${LOCKED.code}: ${LOCKED.message}`] }).toEqual({ compared: 10, locked: N - 10 });
    expect(await rest(d.url, '/v1/admin/login', { admin_secret: d.adminSecret })).toMatchObject({ ok: false, ...LOCKED, status: 429 });
    expect(await rest(d.url, '/v1/admin/users', {}, { 'x-service-admin-secret': d.adminSecret })).toMatchObject({ ok: false, ...LOCKED, status: 429 });
  }, 120_000);
});
