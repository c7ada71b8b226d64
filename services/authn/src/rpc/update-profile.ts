/** @module @gatehouse/authn/rpc/update-profile — AuthnService.UpdateProfile (POST /v1/update_profile, behaviour.md §3.5). */
import { updateProfile } from '../domain/profile.ts';
import { clearCookies } from './cookies.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';
import { auditOf } from './mfa.ts';
import { profileFieldsOf } from './wire.ts';

/** Updates the caller's profile; an email or phone change signs the caller out (cookies cleared). @throws AppError as {@link updateProfile} */
export const updateProfileRpc = (c: RpcContext): AuthnHandler<'UpdateProfile'> => async (req, ctx) => {
  const caller = await c.authenticator.requireUser(ctx);
  const { message, signedOut } = await updateProfile(c, caller, {
    oldPassword: req.old_password, newPassword: req.new_password, confirmNewPassword: req.confirm_new_password,
    email: req.email, phoneNumber: req.phone_number, ...profileFieldsOf(req), picture: req.picture,
    isMultiFactorAuthEnabled: req.is_multi_factor_auth_enabled, appData: req.app_data,
  }, auditOf(ctx));
  if (signedOut) clearCookies(ctx, c.options);
  return { message };
};
