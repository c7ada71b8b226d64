/**
 * @module @gatehouse/mfa/domain/gate
 * The MFA gate (behaviour.md §4.1) after a first step, as mfa decides it: rows G0-G7 from the flags,
 * the user's preference, skip and lock fields (authn's User record) and the factors mfa stores. A
 * non-issuing outcome opens a 300 s MFA session holding the first step's grant (§4.2); authn, which
 * asked, answers with the response built here or issues tokens.
 */
import { randomUUID } from 'node:crypto';
import { randomToken, sha256Hex } from '@gatehouse/crypto';
import type { common } from '@gatehouse/contracts';
import { AppError } from '@gatehouse/errors';
import type { MfaSessionRecord, MfaStore, OtpChannel, StoredFactors } from '../storage/ports.ts';
import { openOtpChallenge, type OtpChallenge } from './challenge.ts';
import type { ArmedSession, MfaContext } from './deps.ts';
import { MFA_SESSION_TTL_SECONDS } from './mfa-session.ts';
import type { MfaMethods } from './options.ts';
import { newTotpEnrolment, otpauthUri, qrPngBase64 } from './totp.ts';

/** behaviour.md §3.3 step 7, §4.1 G0 */
export const MFA_LOCKED_MESSAGE = "your account's multi-factor authentication is locked; contact your administrator to regain access";
/** behaviour.md §9 */
export const EMAIL_OTP_SENT = 'Please check email inbox for the OTP';
export const SMS_OTP_SENT = 'Please check text message for the OTP';
export const PROCEED_TO_VERIFY = 'Proceed to mfa verification';
export const PROCEED_TO_SETUP = 'Proceed to mfa setup';

/** G1/G6 `issue`; G2 `email_otp`; G3 `sms_otp`; G4 `verify`; G5 `enrol`; G7 `offer`. */
export type GateOutcome = 'issue' | 'email_otp' | 'sms_otp' | 'verify' | 'enrol' | 'offer';

/** The screens and offers of a non-issuing outcome (the AuthResponse fields of behaviour.md §4.1). */
export interface GateScreens {
  message: string;
  showEmailOtpScreen: boolean;
  showMobileOtpScreen: boolean;
  showTotpScreen: boolean;
  offerWebauthnVerify: boolean;
  offerWebauthnSetup: boolean;
  offerEmailOtpSetup: boolean;
  offerSmsOtpSetup: boolean;
  /** a pending TOTP enrolment, shown once: base32 secret, base64 PNG QR, recovery codes */
  totp: { secret: string; scannerImage: string; recoveryCodes: string[] } | null;
}

export interface GateDecision {
  outcome: GateOutcome;
  /** null for `issue` */
  screens: GateScreens | null;
  /** the MFA session opened for a non-issuing outcome (the `mfa` cookie); null for `issue` */
  armed: ArmedSession | null;
}

/** The first step's grant, kept in the MFA session and applied when tokens are issued (§4.1). */
export type GateRequest = Omit<OtpChallenge, 'channel' | 'purpose'>;

/** behaviour.md §4.1 "user wants MFA": enforced; or the preference is true; or it is null and MFA is available. */
export function userWantsMfa(m: MfaMethods, user: Pick<common.User, 'is_multi_factor_auth_enabled'>): boolean {
  const pref = user.is_multi_factor_auth_enabled ?? null;
  return m.enforced || pref === true || (pref === null && m.available);
}

/** behaviour.md §4.1 "verified factor", counting each only while its method is usable. */
export function verifiedFactors(m: MfaMethods, f: StoredFactors): { totp: boolean; emailOtp: boolean; smsOtp: boolean; passkey: boolean } {
  return { totp: m.totp && f.totp, emailOtp: m.emailOtp && f.emailOtp, smsOtp: m.smsOtp && f.smsOtp, passkey: m.webauthn && f.passkeys > 0 };
}

/** The verified factors of one user (behaviour.md §4.1). */
export async function factorsOf(c: { store: MfaStore; methods: MfaMethods }, userId: string): Promise<ReturnType<typeof verifiedFactors>> {
  const stored = (await c.store.storedFactors([userId])).get(userId) ?? { totp: false, emailOtp: false, smsOtp: false, passkeys: 0 };
  return verifiedFactors(c.methods, stored);
}

/** `user.enrolled_mfa_methods` (behaviour.md §5.3): the verified factors whose method is usable. */
export async function enrolledMethods(c: MfaContext, userIds: readonly string[]): Promise<Map<string, string[]>> {
  const stored = await c.store.storedFactors(userIds);
  const out = new Map<string, string[]>();
  for (const id of userIds) {
    const f = verifiedFactors(c.methods, stored.get(id) ?? { totp: false, emailOtp: false, smsOtp: false, passkeys: 0 });
    out.set(id, [f.totp && 'totp', f.passkey && 'webauthn', f.emailOtp && 'email_otp', f.smsOtp && 'sms_otp'].filter((x): x is string => Boolean(x)));
  }
  return out;
}

const noScreens = (message: string): GateScreens => ({
  message, showEmailOtpScreen: false, showMobileOtpScreen: false, showTotpScreen: false, offerWebauthnVerify: false,
  offerWebauthnSetup: false, offerEmailOtpSetup: false, offerSmsOtpSetup: false, totp: null,
});

/**
 * Runs the gate for `req.user` (rows in order; the first match wins).
 * @returns `issue`, or the outcome with its screens and the armed MFA session
 * @throws AppError `failed_precondition` with the lock message (G0); `invalid_argument` without a
 *   user id; `failed_precondition` `email service not enabled` if SMTP vanished between the flag
 *   check and the send (cannot happen with fixed flags)
 */
export async function evaluateGate(c: MfaContext, req: GateRequest): Promise<GateDecision> {
  const user = req.user;
  if (!user?.id) throw new AppError('invalid_argument', 'the gate needs the user');
  // G0
  if (user.mfa_locked_at !== null && user.mfa_locked_at !== undefined) throw new AppError('failed_precondition', MFA_LOCKED_MESSAGE);
  const m = c.methods;
  // G1
  if (!m.available || !userWantsMfa(m, user)) return { outcome: 'issue', screens: null, armed: null };
  const f = await factorsOf(c, user.id);
  // G2, G3: a code on the enrolled channel (the passkey offer beside it)
  const otpChannel: OtpChannel | null = f.emailOtp && user.email ? 'email' : f.smsOtp && user.phone_number ? 'sms' : null;
  if (otpChannel) {
    const armed = await openOtpChallenge(c, { ...req, channel: otpChannel, purpose: 'login' });
    const email = otpChannel === 'email';
    return {
      outcome: email ? 'email_otp' : 'sms_otp',
      screens: { ...noScreens(email ? EMAIL_OTP_SENT : SMS_OTP_SENT), showEmailOtpScreen: email, showMobileOtpScreen: !email, offerWebauthnVerify: f.passkey },
      armed,
    };
  }
  // G4
  if (f.totp || f.passkey) {
    const armed = await openBareSession(c, req);
    return { outcome: 'verify', screens: { ...noScreens(PROCEED_TO_VERIFY), showTotpScreen: f.totp, offerWebauthnVerify: f.passkey }, armed };
  }
  // G6 (G5 comes first: enforced users cannot have skipped their way out)
  if (!m.enforced && user.has_skipped_mfa_setup_at !== null && user.has_skipped_mfa_setup_at !== undefined) {
    return { outcome: 'issue', screens: null, armed: null };
  }
  // G5 / G7: identical answers; skip_mfa_setup decides
  const armed = await openBareSession(c, req);
  const screens: GateScreens = {
    ...noScreens(PROCEED_TO_SETUP),
    offerWebauthnSetup: m.webauthn,
    offerEmailOtpSetup: m.emailOtp && Boolean(user.email),
    offerSmsOtpSetup: m.smsOtp && Boolean(user.phone_number),
  };
  if (m.totp) {
    screens.showTotpScreen = true;
    screens.totp = await stagePendingTotp(c, user);
  }
  return { outcome: m.enforced ? 'enrol' : 'offer', screens, armed };
}

/**
 * Creates or replaces the user's pending TOTP enrolment and its pending recovery codes (behaviour.md
 * §4.1 offers, §4.5): the active enrolment, if any, keeps working until verify_otp confirms this one.
 * @returns the secret, QR and codes in clear, shown once
 */
export async function stagePendingTotp(c: MfaContext, user: Pick<common.User, 'id' | 'email' | 'phone_number'>): Promise<NonNullable<GateScreens['totp']>> {
  const now = c.now();
  const e = newTotpEnrolment(c.totpKey, user.id, 'pending', now);
  await c.store.transaction(async (tx) => {
    await tx.totp.put(e.record);
    await tx.recoveryCodes.replace(user.id, 'pending', e.recoveryRecords);
  });
  const uri = otpauthUri(c.options.organizationName, user, e.secret);
  return { secret: e.secret, scannerImage: await qrPngBase64(uri), recoveryCodes: e.recoveryCodes };
}

/**
 * Opens a 300 s MFA session without a code (G4, G5, G7, totp_mfa_setup): TOTP, a passkey or a setup
 * completes it.
 */
export async function openBareSession(c: MfaContext, req: GateRequest): Promise<ArmedSession> {
  const user = req.user!;
  const now = c.now();
  const handle = randomToken(32);
  const expiresAt = now + MFA_SESSION_TTL_SECONDS;
  const session: MfaSessionRecord = {
    id: randomUUID(), handleHash: sha256Hex(handle), userId: user.id, purpose: 'login', channel: null, contact: null, user,
    loginMethod: req.loginMethod, roles: [...req.roles], scope: [...req.scope], state: req.state, authTime: req.authTime || now,
    expiresAt, createdAt: now,
  };
  await c.store.transaction((tx) => tx.sessions.create(session));
  return { handle, expiresAt, armedAt: now };
}
