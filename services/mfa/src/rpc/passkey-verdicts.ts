/**
 * @module @gatehouse/mfa/rpc/passkey-verdicts
 * MfaInternal.VerifyWebauthnRegistration and VerifyWebauthnLogin: authn's questions about a passkey
 * ceremony (behaviour.md §4.3). mfa verifies, stores and completes the MFA session (the cleared `mfa`
 * cookie travels back); authn answers the caller and issues tokens.
 */
import type { mfa } from '@gatehouse/contracts';
import type { CallContext } from '@gatehouse/rpc';
import type { MfaContext } from '../domain/deps.ts';
import { verifyLogin } from '../domain/passkey-login.ts';
import { verifyRegistration } from '../domain/passkey-registration.ts';
import type { MfaSessionRecord } from '../storage/ports.ts';
import { clearMfaCookieOn, mfaHandleOf } from './cookies.ts';
import { auditorOf, sessionRegistrant } from './passkeys.ts';

const grantOf = (s: MfaSessionRecord | null): mfa.MfaGrant | null =>
  s ? { login_method: s.loginMethod, roles: s.roles, scope: s.scope, state: s.state, auth_time: s.authTime } : null;

/** @throws AppError as {@link verifyRegistration} */
export const verifyWebauthnRegistrationRpc = (c: MfaContext) =>
  async (req: mfa.VerifyWebauthnRegistrationRequest, ctx: CallContext): Promise<mfa.WebauthnRegistrationVerdict> => {
    // user path: the user authn authenticated; else the caller's MFA session
    const registrant = req.user_id
      ? { kind: 'user' as const, userId: req.user_id, userName: req.user_id }
      : await sessionRegistrant(c, ctx, { email: req.email, phoneNumber: req.phone_number });
    const v = await verifyRegistration(c, registrant, { credential: req.credential, name: req.name }, auditorOf(ctx));
    if (v.completedSession) clearMfaCookieOn(ctx, c.options);
    return { user_id: v.passkey.userId, passkey_id: v.passkey.id, grant: grantOf(v.completedSession) };
  };

/** @throws AppError as {@link verifyLogin} */
export const verifyWebauthnLoginRpc = (c: MfaContext) =>
  async (req: mfa.VerifyWebauthnLoginRequest, ctx: CallContext): Promise<mfa.WebauthnLoginVerdict> => {
    const v = await verifyLogin(c, mfaHandleOf(ctx), req.credential);
    if (v.completedSession) clearMfaCookieOn(ctx, c.options);
    return { user_id: v.userId, passkey_id: v.passkeyId, user_verified: v.userVerified, grant: grantOf(v.completedSession) };
  };
