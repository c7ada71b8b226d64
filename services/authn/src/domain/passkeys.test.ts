/**
 * authn's passkey completions (behaviour.md §4.1 "no gate", §4.3) on mfa's verdicts: the user path
 * answers without tokens, a passkey login issues with amr hwk+user, an MFA session's grant is used,
 * and G0, revocation and an unverified email refuse. mfa's internal API is a stand-in answering the
 * verdict the test sets; the real ceremonies run in Chromium (test/e2e/passkeys.e2e.test.ts).
 */
import { describe, expect, it } from '@jest/globals';
import { decodeJwt } from 'jose';
import type { mfa } from '@gatehouse/contracts';
import { AppError } from '@gatehouse/errors';
import { PASSWORD, makeAuthn } from '../fixture.ts';
import type { MfaInternalClient } from '../rpc/deps.ts';

const unused = async (): Promise<never> => {
  throw new AppError('unimplemented', 'not used by these tests');
};

function passkeyMfa() {
  const state: { verdict: mfa.WebauthnLoginVerdict | null; registrations: mfa.VerifyWebauthnRegistrationRequest[] } = { verdict: null, registrations: [] };
  const client: MfaInternalClient = {
    OpenOtpChallenge: unused, VerifyOtpChallenge: unused, SkipMfaSetup: unused, LockMfa: unused, BeginOtpEnrolment: unused,
    BeginTotpEnrolment: unused, ResetUserMfa: unused,
    async EvaluateGate() { return { outcome: 'issue', response: null }; },
    async EnrolledMfaMethods(req) { return { users: req.user_ids.map((id) => ({ user_id: id, methods: ['webauthn'] })) }; },
    async VerifyWebauthnRegistration(req) {
      state.registrations.push(req);
      return { user_id: req.user_id ?? '', passkey_id: 'pk-1', grant: null };
    },
    async VerifyWebauthnLogin() {
      if (!state.verdict) throw new AppError('unauthenticated', 'invalid passkey');
      return state.verdict;
    },
  };
  return { client, state };
}

const signedUp = async (over = {}) => {
  const m = passkeyMfa();
  const a = makeAuthn(over, { mfa: m.client });
  const { res } = await a.call('Signup', { email: 'ada@example.com', password: PASSWORD, confirm_password: PASSWORD });
  return { a, m, res };
};

describe('webauthn_registration_verify (behaviour.md §4.3)', () => {
  it('user path: mfa stores the passkey for the signed-in user; tokens stay null, user is set', async () => {
    const { a, m, res } = await signedUp();
    const out = await a.call('WebauthnRegistrationVerify', { credential: '{}', name: 'Key' }, { authorization: `Bearer ${res.access_token}` });
    expect(out.res).toMatchObject({
      message: 'Passkey registered successfully.', access_token: null, id_token: null, refresh_token: null, expires_in: null,
      user: { id: res.user.id, email: 'ada@example.com', enrolled_mfa_methods: ['webauthn'] },
    });
    expect(m.state.registrations).toEqual([expect.objectContaining({ user_id: res.user.id, credential: '{}', name: 'Key' })]);
  });
});

describe('webauthn_login_verify (behaviour.md §4.1 no gate, §4.3)', () => {
  it('issues with login method webauthn and amr hwk+user; with an MFA session its grant and the passkey as second factor', async () => {
    const { a, m, res } = await signedUp();
    m.state.verdict = { user_id: res.user.id, passkey_id: 'pk-1', user_verified: true, grant: null };
    const plain = (await a.call('WebauthnLoginVerify', { credential: '{}' })).res;
    expect(plain).toMatchObject({ message: 'Logged in successfully with passkey.', user: { id: res.user.id } });
    expect(decodeJwt(plain.id_token)).toMatchObject({ login_method: 'webauthn', amr: ['hwk', 'user'] });
    m.state.verdict = { user_id: res.user.id, passkey_id: 'pk-1', user_verified: true, grant: { login_method: 'basic_auth', roles: ['user'], scope: ['openid', 'offline_access'], auth_time: a.now() - 5 } };
    const gated = (await a.call('WebauthnLoginVerify', { credential: '{}' })).res;
    expect(decodeJwt(gated.id_token)).toMatchObject({ login_method: 'basic_auth', auth_time: a.now() - 5, amr: ['pwd', 'hwk', 'user', 'mfa'] });
    expect(gated.refresh_token).toEqual(expect.any(String));
  });

  it('refuses a revoked user, an MFA-locked user (G0) and an unverified email; an unknown account is invalid passkey', async () => {
    const { a, m, res } = await signedUp();
    m.state.verdict = { user_id: 'gone', passkey_id: 'pk-1', user_verified: true, grant: null };
    await expect(a.call('WebauthnLoginVerify', { credential: '{}' })).rejects.toMatchObject({ code: 'unauthenticated', message: 'invalid passkey' });
    m.state.verdict = { user_id: res.user.id, passkey_id: 'pk-1', user_verified: true, grant: null };
    const u = (await a.storage.users.findById(res.user.id))!;
    await a.storage.users.transaction((tx) => tx.users.update({ ...u, emailVerifiedAt: null }));
    await expect(a.call('WebauthnLoginVerify', { credential: '{}' })).rejects.toMatchObject({
      code: 'failed_precondition', message: 'email is not verified. please verify your email before signing in with a passkey',
    });
    await a.storage.users.transaction((tx) => tx.users.update({ ...u, mfaLockedAt: a.now() }));
    await expect(a.call('WebauthnLoginVerify', { credential: '{}' })).rejects.toMatchObject({ code: 'failed_precondition', message: expect.stringContaining('locked') });
    await a.storage.users.transaction((tx) => tx.users.update({ ...u, revokedTimestamp: a.now() }));
    await expect(a.call('WebauthnLoginVerify', { credential: '{}' })).rejects.toMatchObject({ code: 'failed_precondition', message: 'user access has been revoked' });
  });
});
