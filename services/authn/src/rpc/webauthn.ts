/**
 * @module @gatehouse/authn/rpc/webauthn
 * AuthnService.WebauthnRegistrationVerify and WebauthnLoginVerify (POST /v1/webauthn_registration_verify,
 * /v1/webauthn_login_verify; behaviour.md §4.3): wire ↔ domain, the caller, the session cookies.
 */
import type { CallContext } from '@gatehouse/rpc';
import { loginWithPasskey, PASSKEY_LOGGED_IN, registerPasskey } from '../domain/passkeys.ts';
import { publicUser } from '../domain/user.ts';
import { recordUserAction } from './audit.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';
import { auditOf, mfaChallengesOf } from './mfa.ts';
import { issuedResponse } from './wire.ts';

/** The signed-in caller's id, or null (then the call is the MFA-session path, behaviour.md §4.3). */
async function signedInUserId(c: RpcContext, ctx: CallContext): Promise<string | null> {
  try {
    return (await c.authenticator.requireUser(ctx)).userId;
  } catch {
    return null;
  }
}

/** @throws AppError as {@link registerPasskey} */
export const webauthnRegistrationVerifyRpc = (c: RpcContext): AuthnHandler<'WebauthnRegistrationVerify'> => async (req, ctx) => {
  const userId = await signedInUserId(c, ctx);
  const out = await registerPasskey(c, mfaChallengesOf(c.mfa, ctx), userId, {
    credential: req.credential, name: req.name, email: req.email, phoneNumber: req.phone_number, state: req.state,
  }, auditOf(ctx));
  if (out.issued) await recordUserAction(c, ctx, 'user.login_success', { userId: out.issued.user.id, email: out.issued.user.email, details: { method: 'webauthn' } });
  const res = issuedResponse(ctx, c.options, out.message, out.issued);
  return out.issued ? res : { ...res, user: publicUser(out.user, out.enrolledMfaMethods) };
};

/** @throws AppError as {@link loginWithPasskey} */
export const webauthnLoginVerifyRpc = (c: RpcContext): AuthnHandler<'WebauthnLoginVerify'> => async (req, ctx) => {
  const issued = await loginWithPasskey(c, mfaChallengesOf(c.mfa, ctx), req.credential);
  await recordUserAction(c, ctx, 'user.login_success', { userId: issued.user.id, email: issued.user.email, details: { method: 'webauthn' } });
  return issuedResponse(ctx, c.options, PASSKEY_LOGGED_IN, issued);
};
