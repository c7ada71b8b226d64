/**
 * @module @gatehouse/mfa/rpc/enrolment
 * MfaInternal.BeginOtpEnrolment, BeginTotpEnrolment, SkipMfaSetup, LockMfa, ResetUserMfa and
 * EnrolledMfaMethods: wire ↔ domain (domain/enrol.ts, domain/gate.ts), and the `mfa` cookie.
 */
import type { mfa } from '@gatehouse/contracts';
import { AppError } from '@gatehouse/errors';
import type { CallContext } from '@gatehouse/rpc';
import type { MfaContext } from '../domain/deps.ts';
import { beginOtpEnrolment, beginTotpEnrolment, lockMfa, resetUserMfa, skipMfaSetup } from '../domain/enrol.ts';
import { enrolledMethods } from '../domain/gate.ts';
import { clearMfaCookieOn, mfaHandleOf, setMfaCookie } from './cookies.ts';
import { gateAuthResponse } from './gate-response.ts';

/** behaviour.md §9 */
export const PROCEED_TO_TOTP = 'Proceed to totp verification screen';

/** @throws AppError as {@link beginOtpEnrolment}; `invalid_argument` for a channel other than `email`/`sms` */
export const beginOtpEnrolmentRpc = (c: MfaContext) => async (req: mfa.BeginOtpEnrolmentRequest, ctx: CallContext): Promise<mfa.BeginEnrolmentResponse> => {
  if (req.channel !== 'email' && req.channel !== 'sms') throw new AppError('invalid_argument', `unsupported OTP channel: ${req.channel}`);
  const armed = await beginOtpEnrolment(c, {
    channel: req.channel,
    caller: req.user ? { user: req.user, loginMethod: req.login_method, roles: req.roles, scope: req.scope, state: null, authTime: req.auth_time } : null,
    handle: mfaHandleOf(ctx),
    claim: { email: req.email, phoneNumber: req.phone_number },
  });
  setMfaCookie(ctx, c.options, armed);
  return { expires_at: armed.expiresAt };
};

/** @throws AppError as {@link beginTotpEnrolment} */
export const beginTotpEnrolmentRpc = (c: MfaContext) => async (req: mfa.BeginTotpEnrolmentRequest, ctx: CallContext) => {
  const { totp, armed } = await beginTotpEnrolment(c, {
    user: req.user ?? null, loginMethod: req.login_method, roles: req.roles, scope: req.scope, state: null, authTime: req.auth_time,
  });
  setMfaCookie(ctx, c.options, armed);
  return gateAuthResponse({
    message: PROCEED_TO_TOTP, showEmailOtpScreen: false, showMobileOtpScreen: false, showTotpScreen: true, offerWebauthnVerify: false,
    offerWebauthnSetup: false, offerEmailOtpSetup: false, offerSmsOtpSetup: false, totp,
  });
};

/** @throws AppError as {@link skipMfaSetup} */
export const skipMfaSetupRpc = (c: MfaContext) => async (req: mfa.MfaSessionClaim, ctx: CallContext): Promise<mfa.MfaVerdict> => {
  const s = await skipMfaSetup(c, mfaHandleOf(ctx), { email: req.email, phoneNumber: req.phone_number });
  clearMfaCookieOn(ctx, c.options);
  return {
    user_id: s.userId, verified_channel: '', verified_contact: '', login_method: s.loginMethod, roles: s.roles, scope: s.scope,
    state: s.state, auth_time: s.authTime, amr: [], enrolled_method: '',
  };
};

/** @throws AppError as {@link lockMfa} */
export const lockMfaRpc = (c: MfaContext) => async (req: mfa.MfaSessionClaim, ctx: CallContext): Promise<mfa.LockMfaVerdict> => {
  const userId = await lockMfa(c, mfaHandleOf(ctx), { email: req.email, phoneNumber: req.phone_number });
  clearMfaCookieOn(ctx, c.options);
  return { user_id: userId };
};

/** @throws AppError as {@link resetUserMfa} */
export const resetUserMfaRpc = (c: MfaContext) => async (req: mfa.ResetUserMfaRequest): Promise<mfa.ResetUserMfaResponse> =>
  ({ deleted: await resetUserMfa(c, req.user_id) });

/** At most this many users per call (an admin page is at most 1000, behaviour.md §10). */
const MAX_USERS = 1000;

/** @throws AppError `invalid_argument` for more than 1000 ids */
export const enrolledMfaMethodsRpc = (c: MfaContext) => async (req: mfa.EnrolledMfaMethodsRequest): Promise<mfa.EnrolledMfaMethodsResponse> => {
  if (req.user_ids.length > MAX_USERS) throw new AppError('invalid_argument', `at most ${MAX_USERS} user ids`);
  const m = await enrolledMethods(c, req.user_ids);
  return { users: req.user_ids.map((id) => ({ user_id: id, methods: m.get(id) ?? [] })) };
};
