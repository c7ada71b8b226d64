/** @module @gatehouse/mfa/rpc/open-otp-challenge — MfaInternal.OpenOtpChallenge: wire ↔ domain, and the `mfa` cookie. */
import type { mfa } from '@gatehouse/contracts';
import type { CallContext } from '@gatehouse/rpc';
import { openOtpChallenge } from '../domain/challenge.ts';
import type { MfaContext } from '../domain/deps.ts';
import { setMfaCookie } from './cookies.ts';

/** @throws AppError as {@link openOtpChallenge}; `invalid_argument` without a user */
export const openOtpChallengeRpc = (c: MfaContext) => async (req: mfa.OpenOtpChallengeRequest, ctx: CallContext): Promise<mfa.OpenOtpChallengeResponse> => {
  const armed = await openOtpChallenge(c, {
    user: req.user ?? null,
    channel: req.channel, purpose: req.purpose, loginMethod: req.login_method,
    roles: req.roles, scope: req.scope, state: req.state ?? null, authTime: req.auth_time,
    signupVerification: req.signup_verification === true, decoy: req.decoy === true,
  });
  setMfaCookie(ctx, c.options, armed);
  return { expires_at: armed.expiresAt, code_sent: armed.codeSent };
};
