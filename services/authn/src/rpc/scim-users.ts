/**
 * @module @gatehouse/authn/rpc/scim-users
 * AuthnInternal.ProvisionUser, FindUsers, UpdateProvisionedUser and SetUserActive: the user rows of
 * SCIM provisioning (behaviour.md §6.4), called by the orgs service with the internal token.
 */
import { findUsers, provisionUser, setUserActive, updateProvisionedUser } from '../domain/scim-users.ts';
import { publicUser } from '../domain/user.ts';
import type { AuthnInternalHandler, RpcContext } from './deps.ts';

/** @throws AppError `invalid_argument` (email, phone); `already_exists` (phone taken) */
export const provisionUserRpc = (c: RpcContext): AuthnInternalHandler<'ProvisionUser'> => async (req) => {
  const { user, created } = await provisionUser(c, {
    email: req.email, givenName: req.given_name, familyName: req.family_name, phoneNumber: req.phone_number, active: req.active,
  });
  return { user: publicUser(user), created };
};

/** @throws AppError `invalid_argument` `too many ids: max 1000` */
export const findUsersRpc = (c: RpcContext): AuthnInternalHandler<'FindUsers'> => async (req) => {
  const users = await findUsers(c, req.ids ?? [], req.email);
  return { users: users.map((u) => publicUser(u)) };
};

/** @throws AppError `not_found` `user not found`; `invalid_argument`; `already_exists` */
export const updateProvisionedUserRpc = (c: RpcContext): AuthnInternalHandler<'UpdateProvisionedUser'> => async (req) => {
  const user = await updateProvisionedUser(c, req.user_id, {
    email: req.email, givenName: req.given_name, familyName: req.family_name, phoneNumber: req.phone_number,
  });
  return publicUser(user);
};

/** @throws AppError `not_found` `user not found` */
export const setUserActiveRpc = (c: RpcContext): AuthnInternalHandler<'SetUserActive'> => async (req) => {
  const { user, changed } = await setUserActive(c, req.user_id, req.active);
  return { user: publicUser(user), changed };
};
