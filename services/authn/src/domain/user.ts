/**
 * @module @gatehouse/authn/domain/user
 * Rules about a stored user, and the User record it is shown as (behaviour.md §5.3, graphql.md §3.1).
 */
import type { common } from '@gatehouse/contracts';
import { AppError } from '@gatehouse/errors';
import type { UserReader, UserRecord } from '../storage/ports.ts';
import type { Opt } from './validation.ts';

/**
 * The free-text profile fields signup and update_profile take, each as the request names it (for
 * messages) and as the record does (behaviour.md §3.1: at most 256 characters, trimmed).
 */
export const PROFILE_FIELDS = [
  ['given_name', 'givenName'], ['family_name', 'familyName'], ['middle_name', 'middleName'],
  ['nickname', 'nickname'], ['gender', 'gender'], ['birthdate', 'birthdate'],
] as const;

/** The profile fields of a request: absent or null is "not supplied". */
export type ProfileFields = { [K in (typeof PROFILE_FIELDS)[number][1]]?: Opt<string> };

/** The identifiers a request names a user by (behaviour.md §3.3 step 1: the email wins when both are given). */
export interface ContactInput {
  email?: Opt<string>;
  phoneNumber?: Opt<string>;
}

/** The user fields signup and update_profile both take. */
export interface ProfileInput extends ProfileFields, ContactInput {
  picture?: Opt<string>;
  appData?: Opt<Record<string, unknown>>;
}

/**
 * The User record as it leaves authn (behaviour.md §5.3): every field present, lists `[]`, unset
 * `null`. Responses, event payloads, email templates (`{{.user.*}}`) and the custom access token
 * script all see this shape; the password hash never leaves.
 */
export function publicUser(u: UserRecord, enrolledMfaMethods: readonly string[] = []): common.User {
  return {
    id: u.id,
    email: u.email,
    email_verified: u.emailVerifiedAt !== null,
    signup_methods: u.signupMethods,
    given_name: u.givenName,
    family_name: u.familyName,
    middle_name: u.middleName,
    nickname: u.nickname,
    preferred_username: u.email,
    gender: u.gender,
    birthdate: u.birthdate,
    phone_number: u.phoneNumber,
    phone_number_verified: u.phoneNumberVerifiedAt !== null,
    picture: u.picture,
    roles: [...u.roles],
    created_at: u.createdAt,
    updated_at: u.updatedAt,
    revoked_timestamp: u.revokedTimestamp,
    is_multi_factor_auth_enabled: u.isMultiFactorAuthEnabled,
    has_skipped_mfa_setup_at: u.hasSkippedMfaSetupAt,
    mfa_locked_at: u.mfaLockedAt,
    enrolled_mfa_methods: [...enrolledMfaMethods],
    app_data: u.appData,
  };
}

/** True when the user may not authenticate: admin-revoked or self-deactivated (behaviour.md §3.1). */
export const isRevoked = (u: UserRecord): boolean => u.revokedTimestamp !== null || u.deactivatedAt !== null;

/**
 * The stored user `userId` (the federated `User` entity, graphql.md §5.2).
 * @throws AppError `not_found` `user not found`, also for an empty id
 */
export async function getUserById(users: UserReader, userId: string): Promise<UserRecord> {
  const u = userId ? await users.findById(userId) : null;
  if (!u) throw new AppError('not_found', 'user not found');
  return u;
}

/**
 * A signed-in caller's stored user, who must still be active (behaviour.md §2.1).
 * @throws AppError `unauthenticated` `unauthorized` when the user is gone, revoked or deactivated
 */
export async function activeUser(users: UserReader, userId: string): Promise<UserRecord> {
  const user = await users.findById(userId);
  if (!user || isRevoked(user)) throw new AppError('unauthenticated', 'unauthorized');
  return user;
}

/** Adds a signup method to the comma list once. */
export function addSignupMethod(list: string, method: string): string {
  const parts = list.split(',').map((s) => s.trim()).filter(Boolean);
  return parts.includes(method) ? parts.join(',') : [...parts, method].join(',');
}

/**
 * The `users.isActive` hook for `createAuthenticator` / `createPlatformAuth`: a bearer or cookie
 * credential of a revoked, deactivated or deleted user fails (behaviour.md §2.1).
 */
export function createUserActivityCheck(users: { findById(id: string): Promise<UserRecord | null> }): { isActive(userId: string): Promise<boolean> } {
  return {
    async isActive(userId) {
      const u = await users.findById(userId);
      return u !== null && !isRevoked(u);
    },
  };
}
