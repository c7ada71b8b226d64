/**
 * authn's side of the MFA gate (behaviour.md §4.1, §4.3, §4.7, §5.7): it answers mfa's gate decision
 * as is, sets the user fields skip and lock change, issues tokens with the factor's `amr`, and emits
 * the audit events, against a scripted mfa (the real one runs in test/e2e/mfa-gate.e2e.test.ts).
 */
import { describe, expect, it } from '@jest/globals';
import { decodeJwt } from 'jose';
import type { common, mfa } from '@gatehouse/contracts';
import { AppError } from '@gatehouse/errors';
import { PASSWORD, makeAuthn } from '../fixture.ts';
import type { MfaInternalClient } from '../rpc/deps.ts';

const LOCKED = "your account's multi-factor authentication is locked; contact your administrator to regain access";
const unused = async (): Promise<never> => {
  throw new AppError('unimplemented', 'not used by these tests');
};

/** mfa as authn sees it: the gate answers `decision` (default issue); verdicts are the test's. */
function scriptedMfa() {
  const state: { decision: mfa.GateDecision; verdict: mfa.MfaVerdict | null; lockUser: string } = {
    decision: { outcome: 'issue', response: null }, verdict: null, lockUser: '',
  };
  const gateCalls: mfa.EvaluateGateRequest[] = [];
  const verdict = (): mfa.MfaVerdict => {
    if (!state.verdict) throw new AppError('unauthenticated', 'invalid session');
    return state.verdict;
  };
  const client: MfaInternalClient = {
    OpenOtpChallenge: unused,
    async VerifyOtpChallenge() { return verdict(); },
    async EvaluateGate(req, ctx) {
      gateCalls.push(req);
      if (state.decision.outcome !== 'issue') ctx.setCookies.push('mfa=h; Path=/; Max-Age=300; HttpOnly');
      return state.decision;
    },
    async SkipMfaSetup() { return verdict(); },
    async LockMfa() { return { user_id: state.lockUser }; },
    BeginOtpEnrolment: unused,
    BeginTotpEnrolment: unused,
    ResetUserMfa: unused,
    async EnrolledMfaMethods(req) { return { users: req.user_ids.map((id) => ({ user_id: id, methods: ['totp'] })) }; },
    VerifyWebauthnRegistration: unused,
    VerifyWebauthnLogin: unused,
  };
  return { client, state, gateCalls };
}

const offer = (): common.AuthResponse => ({
  message: 'Proceed to mfa setup', access_token: null, id_token: null, refresh_token: null, expires_in: null, user: null,
  should_show_email_otp_screen: false, should_show_mobile_otp_screen: false, should_show_totp_screen: true,
  should_offer_webauthn_mfa_verify: false, should_offer_webauthn_mfa_setup: false, should_offer_email_otp_mfa_setup: false,
  should_offer_sms_otp_mfa_setup: false, should_offer_mfa_setup: false,
  authenticator_scanner_image: 'iVBOR', authenticator_secret: 'S'.repeat(32), authenticator_recovery_codes: ['c1'],
});

const verdictFor = (userId: string, over: Partial<mfa.MfaVerdict> = {}): mfa.MfaVerdict => ({
  user_id: userId, verified_channel: '', verified_contact: '', login_method: 'basic_auth', roles: ['user'], scope: ['openid'],
  state: null, auth_time: 0, amr: ['otp'], enrolled_method: '', ...over,
});

const audits = (a: ReturnType<typeof makeAuthn>) =>
  a.storage.published.filter((e) => e.name === 'audit.recorded').map((e) => e.data as { action: string; actor_id?: string; resource_id?: string; metadata: string });

describe('the gate in authn (behaviour.md §4.1)', () => {
  it('answers mfa\'s challenge/offer as is, with no session cookie, and hands mfa the user and the first step\'s grant', async () => {
    const m = scriptedMfa();
    const a = makeAuthn({}, { mfa: m.client });
    await a.signup();
    m.state.decision = { outcome: 'offer', response: offer() };
    const { res, cookies } = await a.call('Login', { email: 'ada@example.com', password: PASSWORD, scope: ['openid', 'email'], state: 'st' });
    expect(res).toEqual(offer());
    expect(cookies).toEqual(['mfa=h; Path=/; Max-Age=300; HttpOnly']);
    expect(m.gateCalls.at(-1)).toMatchObject({ user: { email: 'ada@example.com' }, login_method: 'basic_auth', scope: ['openid', 'email'], state: 'st' });
    expect(a.storage.published.filter((e) => e.name === 'user.login')).toHaveLength(0);
  });

  it('issue: tokens with the enrolled methods from mfa; G0 refuses a locked user before mfa is asked', async () => {
    const m = scriptedMfa();
    const a = makeAuthn({}, { mfa: m.client });
    const { res } = await a.signup();
    expect(res).toMatchObject({ message: 'Signed up successfully.', user: { enrolled_mfa_methods: ['totp'] } });
    const u = (await a.storage.users.findByEmail('ada@example.com'))!;
    await a.storage.users.transaction((tx) => tx.users.update({ ...u, mfaLockedAt: 1 }));
    const calls = m.gateCalls.length;
    await expect(a.call('Login', { email: 'ada@example.com', password: PASSWORD })).rejects.toMatchObject({ code: 'failed_precondition', message: LOCKED });
    expect(m.gateCalls).toHaveLength(calls);
  });
});

describe('completions (behaviour.md §4.3)', () => {
  it('verify_otp of a TOTP: tokens with amr pwd otp mfa, no contact verified, user.mfa_enabled audited for a new factor', async () => {
    const m = scriptedMfa();
    const a = makeAuthn({}, { mfa: m.client });
    const { res } = await a.signup();
    m.state.verdict = verdictFor(res.user.id, { enrolled_method: 'totp' });
    const done = await a.call('VerifyOtp', { otp: '123456', is_totp: true }, { cookie: 'mfa=h', 'user-agent': 'jest' });
    expect(done.res.message).toBe('OTP verified successfully.');
    expect(decodeJwt(done.res.id_token).amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(audits(a)).toEqual([
      expect.objectContaining({ action: 'user.signup', actor_id: res.user.id, resource_id: res.user.id }),
      expect.objectContaining({ action: 'user.mfa_enabled', actor_id: res.user.id, resource_id: res.user.id }),
      expect.objectContaining({ action: 'user.login_success', actor_id: res.user.id, metadata: '{"method":"totp","protocol":"rest"}' }),
    ]);
    expect(JSON.parse(audits(a)[1]!.metadata)).toEqual({ method: 'totp', protocol: 'rest' });
  });

  it('the second factor\'s amr survives a session refresh, by bearer and by cookie rotation', async () => {
    const m = scriptedMfa();
    const a = makeAuthn({}, { mfa: m.client });
    const { res } = await a.signup();
    m.state.verdict = verdictFor(res.user.id, { amr: ['otp'] });
    const done = await a.call('VerifyOtp', { otp: '123456', is_totp: true }, { cookie: 'mfa=h' });
    const byBearer = await a.call('Session', {}, { authorization: `Bearer ${done.res.access_token}` });
    expect(decodeJwt(byBearer.res.id_token).amr).toEqual(['pwd', 'otp', 'mfa']);
    const session = done.cookies.find((c) => c.startsWith('cookie_session='))!.split(';')[0]!;
    const rotated = await a.call('Session', {}, { cookie: session });
    expect(decodeJwt(rotated.res.id_token).amr).toEqual(['pwd', 'otp', 'mfa']);
    const again = rotated.cookies.find((c) => c.startsWith('cookie_session='))!.split(';')[0]!;
    expect(decodeJwt((await a.call('Session', {}, { cookie: again })).res.id_token).amr).toEqual(['pwd', 'otp', 'mfa']);
  });

  it('skip_mfa_setup sets has_skipped_mfa_setup_at and issues tokens without a second factor', async () => {
    const m = scriptedMfa();
    const a = makeAuthn({}, { mfa: m.client });
    const { res } = await a.signup();
    m.state.verdict = verdictFor(res.user.id, { amr: [] });
    const skipped = await a.call('SkipMfaSetup', {}, { cookie: 'mfa=h' });
    expect(skipped.res).toMatchObject({ message: 'MFA setup skipped', user: { has_skipped_mfa_setup_at: a.now() } });
    expect(decodeJwt(skipped.res.id_token).amr).toEqual(['pwd']);
  });

  it('lock_mfa sets mfa_locked_at and audits user.mfa_locked; no tokens', async () => {
    const m = scriptedMfa();
    const a = makeAuthn({}, { mfa: m.client });
    const { res } = await a.signup();
    m.state.lockUser = res.user.id;
    const locked = await a.call('LockMfa', {}, { cookie: 'mfa=h' });
    expect(locked).toEqual({ res: { message: 'Your account is locked. Contact your administrator to regain access.' }, cookies: [] });
    expect((await a.storage.users.findById(res.user.id))!.mfaLockedAt).toBe(a.now());
    expect(audits(a).map((e) => e.action)).toEqual(['user.signup', 'user.mfa_locked']);
  });
});

describe('the MFA preference (behaviour.md §4.7)', () => {
  it('off and on again are audited; off is refused while enforced, on while no method is available', async () => {
    const m = scriptedMfa();
    const a = makeAuthn({}, { mfa: m.client });
    const { bearer } = await a.signup();
    await a.call('UpdateProfile', { is_multi_factor_auth_enabled: false }, bearer);
    await a.call('UpdateProfile', { is_multi_factor_auth_enabled: true }, bearer);
    expect(audits(a).map((e) => e.action)).toEqual(['user.signup', 'user.mfa_disabled', 'user.mfa_enabled']);

    const enforced = makeAuthn({ enforceMfa: true }, { mfa: m.client });
    const e = await enforced.signup();
    await expect(enforced.call('UpdateProfile', { is_multi_factor_auth_enabled: false }, e.bearer)).rejects.toMatchObject({
      code: 'failed_precondition', message: 'cannot disable multi factor authentication as it is enforced by organization',
    });
    const off = makeAuthn({ disableMfa: true }, { mfa: m.client });
    const o = await off.signup();
    await expect(off.call('UpdateProfile', { is_multi_factor_auth_enabled: true }, o.bearer)).rejects.toMatchObject({
      code: 'failed_precondition', message: 'cannot enable MFA: no MFA method is available on this server',
    });
  });
});
