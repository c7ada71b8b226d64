/**
 * The gate's rows (behaviour.md §4.1), TOTP (§4.5), its lockout (§4.4), skip, lock and reset (§4.3,
 * §4.7) in the mfa domain, on the memory store at the fixture clock; TOTP codes come from otplib at
 * that clock with the secret the gate returned.
 */
import { describe, expect, it } from '@jest/globals';
import { generate } from 'otplib';
import { sha256Hex } from '@gatehouse/crypto';
import type { common } from '@gatehouse/contracts';
import { makeMfa, T0, user, type MfaFixture } from '../fixture.ts';
import { beginOtpEnrolment, beginTotpEnrolment, lockMfa, resetUserMfa, skipMfaSetup } from './enrol.ts';
import { enrolledMethods, evaluateGate, type GateRequest } from './gate.ts';
import { verifyOtpChallenge } from './verify-otp.ts';

const LOCKED = "your account's multi-factor authentication is locked; contact your administrator to regain access";
const first = (u: common.User): GateRequest => ({ user: u, loginMethod: 'basic_auth', roles: ['user'], scope: ['openid'], state: 's', authTime: T0 });
const codeAt = (secret: string, epoch: number): Promise<string> => generate({ secret, epoch });

/** the gate's offer for `u`, then TOTP verified with its secret: the secret and codes */
async function enrolTotp(m: MfaFixture, u: common.User) {
  const d = await evaluateGate(m.c, first(u));
  const secret = d.screens!.totp!.secret;
  const v = await verifyOtpChallenge(m.c, d.armed!.handle, { otp: await codeAt(secret, m.now()), isTotp: true });
  return { secret, codes: d.screens!.totp!.recoveryCodes, verdict: v };
}

describe('the gate (behaviour.md §4.1)', () => {
  it('G0 refuses a locked user; G1 issues when MFA is off or the user turned it off', async () => {
    const m = makeMfa();
    await expect(evaluateGate(m.c, first(user('u-l', { mfa_locked_at: T0 })))).rejects.toMatchObject({ code: 'failed_precondition', message: LOCKED });
    expect((await evaluateGate(makeMfa({ disableMfa: true }).c, first(user()))).outcome).toBe('issue');
    expect((await evaluateGate(makeMfa({ disableTotpLogin: true, disableWebauthnMfa: true, smtpHost: undefined }).c, first(user()))).outcome).toBe('issue');
    expect((await evaluateGate(m.c, first(user('u-off', { is_multi_factor_auth_enabled: false })))).outcome).toBe('issue');
    // nothing opened for an issue
    expect(m.store.published).toEqual([]);
  });

  it('G7 offers (skippable), G5 under --enforce-mfa answers the same; G6 issues once skipped, unless enforced', async () => {
    const offer = await evaluateGate(makeMfa().c, first(user()));
    const enrol = await evaluateGate(makeMfa({ enforceMfa: true }).c, first(user()));
    expect(offer.outcome).toBe('offer');
    expect(enrol.outcome).toBe('enrol');
    const shape = (s: typeof offer.screens) => ({ ...s, totp: s?.totp ? Object.keys(s.totp) : null });
    expect(shape(offer.screens)).toEqual(shape(enrol.screens));
    expect(offer.screens).toMatchObject({
      message: 'Proceed to mfa setup', showTotpScreen: true, offerEmailOtpSetup: true, offerSmsOtpSetup: false, offerWebauthnSetup: true,
    });
    expect(offer.armed!.expiresAt - offer.armed!.armedAt).toBe(300);
    const skipped = user('u-s', { has_skipped_mfa_setup_at: T0 - 10 });
    expect((await evaluateGate(makeMfa().c, first(skipped))).outcome).toBe('issue');
    expect((await evaluateGate(makeMfa({ enforceMfa: true }).c, first(skipped))).outcome).toBe('enrol');
  });

  it('the offer stages a pending TOTP: sealed secret and hashed recovery codes at rest, never the clear values', async () => {
    const m = makeMfa();
    const d = await evaluateGate(m.c, first(user()));
    const { secret, recoveryCodes } = d.screens!.totp!;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const stored = await m.store.findTotp('u-ada', 'pending');
    expect(stored).toMatchObject({ slot: 'pending', lastStep: null, expiresAt: T0 + 600 });
    expect(stored!.secretSealed).toMatch(/^v2\./);
    expect(stored!.secretSealed).not.toContain(secret);
    expect(recoveryCodes).toHaveLength(10);
    // only active codes are looked up: pending ones become usable when the TOTP is confirmed
    expect(await m.store.findRecoveryCode('u-ada', sha256Hex(recoveryCodes[0]!))).toBeNull();
  });

  it('G4 after TOTP is verified; G2 after an email OTP enrolment, with the code mailed to the stored email', async () => {
    const m = makeMfa();
    const ada = user();
    await enrolTotp(m, ada);
    expect(await evaluateGate(m.c, first(ada))).toMatchObject({ outcome: 'verify', screens: { message: 'Proceed to mfa verification', showTotpScreen: true, totp: null } });
    const bob = user('u-bob');
    const offer = await evaluateGate(m.c, first(bob));
    await beginOtpEnrolment(m.c, { channel: 'email', caller: null, handle: offer.armed!.handle, claim: {} });
    const v = await verifyOtpChallenge(m.c, offer.armed!.handle, { otp: m.lastCode(bob.email!), isTotp: false });
    expect(v).toMatchObject({ verifiedChannel: 'email', amr: ['otp'], enrolledMethod: 'email_otp' });
    m.advance(31);
    const g2 = await evaluateGate(m.c, first(bob));
    expect(g2).toMatchObject({ outcome: 'email_otp', screens: { message: 'Please check email inbox for the OTP', showEmailOtpScreen: true } });
    expect(m.codesFor(bob.email!)).toHaveLength(2);
    expect(await enrolledMethods(m.c, ['u-ada', 'u-bob', 'u-none'])).toEqual(new Map([['u-ada', ['totp']], ['u-bob', ['email_otp']], ['u-none', []]]));
    // a factor counts only while its method is usable
    expect((await evaluateGate(makeMfa({ disableEmailOtp: true }).c, first(bob))).outcome).toBe('offer');
  });
});

describe('TOTP verification (behaviour.md §4.4, §4.5)', () => {
  it('±1 step around now is accepted, ±2 is not; a step at or before the last accepted one is refused', async () => {
    const m = makeMfa();
    const ada = user();
    const { secret, verdict } = await enrolTotp(m, ada);
    expect(verdict).toMatchObject({ verifiedChannel: '', amr: ['otp'], enrolledMethod: 'totp' });
    const verifyAt = async (epoch: number) => {
      const d = await evaluateGate(m.c, first(ada));
      return verifyOtpChallenge(m.c, d.armed!.handle, { otp: await codeAt(secret, epoch), isTotp: true });
    };
    m.advance(300);
    await expect(verifyAt(m.now() - 60)).rejects.toMatchObject({ message: 'invalid otp' });
    await expect(verifyAt(m.now() + 60)).rejects.toMatchObject({ message: 'invalid otp' });
    await expect(verifyAt(m.now() - 30)).resolves.toMatchObject({ enrolledMethod: '' });
    // the same step again, and the one before it: replays
    await expect(verifyAt(m.now() - 30)).rejects.toMatchObject({ message: 'invalid otp' });
    await expect(verifyAt(m.now() + 30)).resolves.toMatchObject({ amr: ['otp'] });
    await expect(verifyAt(m.now())).rejects.toMatchObject({ message: 'invalid otp' });
  });

  it('re-enrolment stages a new secret for 600 s; the old one works until the new one is confirmed, then the new codes replace the old', async () => {
    const m = makeMfa();
    const ada = user();
    const old = await enrolTotp(m, ada);
    m.advance(60);
    const staged = await beginTotpEnrolment(m.c, first(ada));
    const fresh = staged.totp.secret;
    // the old secret still completes a login
    const login1 = await evaluateGate(m.c, first(ada));
    await expect(verifyOtpChallenge(m.c, login1.armed!.handle, { otp: await codeAt(old.secret, m.now()), isTotp: true })).resolves.toBeDefined();
    m.advance(30);
    await expect(verifyOtpChallenge(m.c, staged.armed.handle, { otp: await codeAt(fresh, m.now()), isTotp: true })).resolves.toMatchObject({ amr: ['otp'] });
    m.advance(30);
    const login2 = await evaluateGate(m.c, first(ada));
    await expect(verifyOtpChallenge(m.c, login2.armed!.handle, { otp: await codeAt(old.secret, m.now()), isTotp: true })).rejects.toMatchObject({ message: 'invalid otp' });
    await expect(verifyOtpChallenge(m.c, login2.armed!.handle, { otp: old.codes[0]!, isTotp: true })).rejects.toMatchObject({ message: 'invalid otp' });
    await expect(verifyOtpChallenge(m.c, login2.armed!.handle, { otp: staged.totp.recoveryCodes[0]!, isTotp: true })).resolves.toBeDefined();
    // a staged secret expires after 600 s
    const late = await beginTotpEnrolment(m.c, first(ada));
    m.advance(601);
    await expect(verifyOtpChallenge(m.c, late.armed.handle, { otp: await codeAt(late.totp.secret, m.now()), isTotp: true })).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('counts TOTP failures apart from email codes: 5 wrong TOTP codes lock TOTP (429), email codes still verify', async () => {
    const m = makeMfa();
    const ada = user();
    const { secret } = await enrolTotp(m, ada);
    m.advance(60);
    const d = await evaluateGate(m.c, first(ada));
    for (let i = 0; i < 5; i++) await expect(verifyOtpChallenge(m.c, d.armed!.handle, { otp: '12345x', isTotp: true })).rejects.toMatchObject({ message: 'invalid otp' });
    await expect(verifyOtpChallenge(m.c, d.armed!.handle, { otp: await codeAt(secret, m.now()), isTotp: true }))
      .rejects.toMatchObject({ code: 'resource_exhausted', message: 'too many failed attempts, please try again later' });
    await beginOtpEnrolment(m.c, { channel: 'email', caller: null, handle: d.armed!.handle, claim: {} });
    await expect(verifyOtpChallenge(m.c, d.armed!.handle, { otp: m.lastCode(ada.email!), isTotp: false })).resolves.toMatchObject({ verifiedChannel: 'email' });
  });

  it('is_totp without any TOTP: authenticator app is not set up for this account', async () => {
    const m = makeMfa({ disableTotpLogin: true });
    const d = await evaluateGate(m.c, first(user()));
    await expect(verifyOtpChallenge(m.c, d.armed!.handle, { otp: '123456', isTotp: true }))
      .rejects.toMatchObject({ code: 'failed_precondition', message: 'authenticator app is not set up for this account' });
  });
});

describe('skip, lock and reset (behaviour.md §4.3, §4.7)', () => {
  it('skip only in the offer state; lock refused while a verified OTP fallback exists; reset deletes every factor', async () => {
    const m = makeMfa();
    const ada = user();
    const offer = await evaluateGate(m.c, first(ada));
    await expect(skipMfaSetup(m.c, offer.armed!.handle, { email: 'other@example.com' })).rejects.toMatchObject({ message: 'invalid session' });
    await expect(skipMfaSetup(m.c, offer.armed!.handle, {})).resolves.toMatchObject({ userId: 'u-ada', loginMethod: 'basic_auth' });
    const enforced = makeMfa({ enforceMfa: true });
    const g5 = await evaluateGate(enforced.c, first(ada));
    await expect(skipMfaSetup(enforced.c, g5.armed!.handle, {})).rejects.toMatchObject({ code: 'failed_precondition', message: 'cannot skip multi factor authentication setup' });

    const g7 = await evaluateGate(m.c, first(ada));
    await beginOtpEnrolment(m.c, { channel: 'email', caller: null, handle: g7.armed!.handle, claim: {} });
    await verifyOtpChallenge(m.c, g7.armed!.handle, { otp: m.lastCode(ada.email!), isTotp: false });
    m.advance(31);
    const g2 = await evaluateGate(m.c, first(ada));
    await expect(lockMfa(m.c, g2.armed!.handle, {})).rejects.toMatchObject({
      code: 'failed_precondition', message: 'a verified email or SMS OTP fallback is available — use it instead of locking your account',
    });
    await enrolTotp(m, user('u-bob'));
    const bob = await evaluateGate(m.c, first(user('u-bob')));
    await expect(lockMfa(m.c, bob.armed!.handle, {})).resolves.toBe('u-bob');
    await expect(skipMfaSetup(m.c, bob.armed!.handle, {})).rejects.toMatchObject({ message: 'invalid session' });

    // bob: TOTP + 10 codes; ada: the email enrolment, and the pending TOTP + 10 codes of her offers
    expect(await resetUserMfa(m.c, 'u-bob')).toBe(11);
    expect(await resetUserMfa(m.c, 'u-ada')).toBe(12);
    expect(await enrolledMethods(m.c, ['u-ada', 'u-bob'])).toEqual(new Map([['u-ada', []], ['u-bob', []]]));
    await expect(resetUserMfa(m.c, '')).rejects.toMatchObject({ code: 'invalid_argument' });
  });

  it('an email OTP setup sends at most one code per 30 s (behaviour.md §4.4)', async () => {
    const m = makeMfa();
    const d = await evaluateGate(m.c, first(user()));
    await beginOtpEnrolment(m.c, { channel: 'email', caller: null, handle: d.armed!.handle, claim: {} });
    m.advance(10);
    await expect(beginOtpEnrolment(m.c, { channel: 'email', caller: null, handle: d.armed!.handle, claim: {} }))
      .rejects.toMatchObject({ code: 'resource_exhausted', message: 'please wait before requesting another OTP' });
    m.advance(20);
    await beginOtpEnrolment(m.c, { channel: 'email', caller: null, handle: d.armed!.handle, claim: {} });
    expect(m.codesFor('u-ada@example.com')).toHaveLength(2);
  });

  it('setups: refusals with the §4.3 messages', async () => {
    const m = makeMfa({ smtpHost: undefined });
    const d = await evaluateGate(m.c, first(user()));
    await expect(beginOtpEnrolment(m.c, { channel: 'email', caller: null, handle: d.armed!.handle, claim: {} }))
      .rejects.toMatchObject({ code: 'failed_precondition', message: 'email OTP is not available on this server' });
    await expect(beginOtpEnrolment(m.c, { channel: 'sms', caller: null, handle: d.armed!.handle, claim: {} }))
      .rejects.toMatchObject({ code: 'failed_precondition', message: 'SMS OTP is not available on this server' });
    const withSmtp = makeMfa();
    await expect(beginOtpEnrolment(withSmtp.c, { channel: 'email', caller: first(user('u-x', { email: null })), handle: undefined, claim: {} }))
      .rejects.toMatchObject({ code: 'failed_precondition', message: 'account has no email address to send an OTP to' });
    await expect(beginTotpEnrolment(makeMfa({ disableTotpLogin: true }).c, first(user())))
      .rejects.toMatchObject({ code: 'failed_precondition', message: 'authenticator app MFA is not available on this server' });
  });
});
