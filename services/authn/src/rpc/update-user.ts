/** @module @gatehouse/authn/rpc/update-user — AuthnService.UpdateUser (POST /v1/admin/update_user, behaviour.md §5.3, §4.7). */
import { updateUser } from '../domain/admin-users.ts';
import { publicUser } from '../domain/user.ts';
import { adminAuditOf } from './admin-audit.ts';
import { enrolledOf, mfaChallengesOf } from './mfa.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/** @throws AppError `invalid_argument`, `not_found`, `already_exists`, `failed_precondition`, `unavailable` */
export const updateUserRpc = (c: RpcContext): AuthnHandler<'UpdateUser'> => async (req, ctx) => {
  const mfa = mfaChallengesOf(c.mfa, ctx);
  const reset = mfa ? { resetUserMfa: async (userId: string) => { await mfa.resetUserMfa(userId); } } : undefined;
  const user = await updateUser(c, {
    id: req.id, email: req.email, emailVerified: req.email_verified, givenName: req.given_name, familyName: req.family_name,
    middleName: req.middle_name, nickname: req.nickname, gender: req.gender, birthdate: req.birthdate,
    phoneNumber: req.phone_number, phoneNumberVerified: req.phone_number_verified, picture: req.picture, roles: req.roles,
    isMultiFactorAuthEnabled: req.is_multi_factor_auth_enabled, resetMfa: req.reset_mfa, appData: req.app_data,
  }, adminAuditOf(ctx), reset);
  return publicUser(user, await enrolledOf(c, ctx, user.id));
};
