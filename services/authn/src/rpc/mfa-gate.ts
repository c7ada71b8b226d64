/**
 * @module @gatehouse/authn/rpc/mfa-gate
 * AuthnService.SkipMfaSetup, LockMfa, EmailOtpMfaSetup, SmsOtpMfaSetup and TotpMfaSetup (behaviour.md
 * §4.3): wire ↔ domain/mfa-gate.ts. The `mfa` cookie goes to mfa and comes back through the call.
 */
import type { UserCaller } from '@gatehouse/auth';
import type { CallContext } from '@gatehouse/rpc';
import { beginOtpSetup, beginTotpSetup, lockMfa, skipMfaSetup, type SetupCaller } from '../domain/mfa-gate.ts';
import { recordUserAction } from './audit.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';
import { auditOf, mfaChallengesOf } from './mfa.ts';
import { outcomeResponse } from './wire.ts';

const setupCallerOf = (u: UserCaller): SetupCaller => ({
  userId: u.userId, grant: { loginMethod: u.loginMethod, roles: u.roles, scope: u.scope, authTime: u.session.authTime },
});

/**
 * The signed-in caller of a `user_or_mfa` RPC, or null when only the `mfa` cookie admitted it (the
 * guard has checked one of the two; its resolution is memoised per call).
 */
async function userOrMfa(c: RpcContext, ctx: CallContext): Promise<SetupCaller | null> {
  try {
    return setupCallerOf(await c.authenticator.requireUser(ctx));
  } catch {
    return null;
  }
}

/** `MFA setup skipped` + tokens. @throws AppError as {@link skipMfaSetup} */
export const skipMfaSetupRpc = (c: RpcContext): AuthnHandler<'SkipMfaSetup'> => async (req, ctx) => {
  const outcome = await skipMfaSetup(c, mfaChallengesOf(c.mfa, ctx), { email: req.email, phoneNumber: req.phone_number });
  if (outcome.issued) await recordUserAction(c, ctx, 'user.login_success', { userId: outcome.issued.user.id, email: outcome.issued.user.email, details: { method: 'skip_mfa_setup' } });
  return outcomeResponse(ctx, c.options, outcome);
};

/** `{message}`; no tokens. @throws AppError as {@link lockMfa} */
export const lockMfaRpc = (c: RpcContext): AuthnHandler<'LockMfa'> => async (req, ctx) =>
  ({ message: await lockMfa(c, mfaChallengesOf(c.mfa, ctx), { email: req.email, phoneNumber: req.phone_number }, auditOf(ctx)) });

/** @throws AppError as {@link beginOtpSetup} */
export const emailOtpMfaSetupRpc = (c: RpcContext): AuthnHandler<'EmailOtpMfaSetup'> => async (req, ctx) =>
  ({ message: await beginOtpSetup(c, mfaChallengesOf(c.mfa, ctx), 'email', await userOrMfa(c, ctx), { email: req.email, phoneNumber: req.phone_number }) });

/** @throws AppError as {@link beginOtpSetup} */
export const smsOtpMfaSetupRpc = (c: RpcContext): AuthnHandler<'SmsOtpMfaSetup'> => async (req, ctx) =>
  ({ message: await beginOtpSetup(c, mfaChallengesOf(c.mfa, ctx), 'sms', await userOrMfa(c, ctx), { email: req.email, phoneNumber: req.phone_number }) });

/** The AuthResponse `Proceed to totp verification screen`. @throws AppError as {@link beginTotpSetup} */
export const totpMfaSetupRpc = (c: RpcContext): AuthnHandler<'TotpMfaSetup'> => async (_req, ctx) =>
  beginTotpSetup(c, mfaChallengesOf(c.mfa, ctx), setupCallerOf(await c.authenticator.requireUser(ctx)));
