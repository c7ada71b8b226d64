/**
 * @module @gatehouse/authn/domain/roles
 * Role rules: self-service roles (behaviour.md §3.1) and granted roles (§2.1).
 */
import { AppError } from '@gatehouse/errors';
import type { AuthnOptions } from './options.ts';
import type { Opt } from './validation.ts';

const invalidRoles = (): AppError => new AppError('invalid_argument', 'invalid roles');

/** What a request asks to be granted (behaviour.md §2.1); an empty list asks for the default. */
export interface GrantRequest {
  roles: readonly string[];
  scope: readonly string[];
  /** the client's opaque value: checked for length, carried in a link where there is one */
  state?: Opt<string>;
}

/**
 * Roles a self-service signup may ask for: all in `--roles`, none in `--protected-roles`;
 * none requested → `--default-roles`.
 * @throws AppError `invalid_argument` `invalid roles`
 */
export function selfServiceRoles(o: AuthnOptions, requested: string[] | undefined): string[] {
  if (!requested) return [...o.defaultRoles];
  if (requested.some((r) => !o.roles.includes(r) || o.protectedRoles.includes(r))) throw invalidRoles();
  return requested;
}

/**
 * Granted roles for a token (behaviour.md §2.1): the requested roles, which must be a subset of the
 * user's; otherwise the user's roles ∩ `--default-roles`, or all of them when that is empty.
 * @throws AppError `invalid_argument` `invalid roles`
 */
export function grantedRoles(o: AuthnOptions, userRoles: string[], requested: string[] | undefined): string[] {
  if (requested) {
    if (requested.some((r) => !userRoles.includes(r))) throw invalidRoles();
    return requested;
  }
  const defaults = userRoles.filter((r) => o.defaultRoles.includes(r));
  return defaults.length > 0 ? defaults : [...userRoles];
}

/** Default scope when the request names none (behaviour.md §2.1). */
export const DEFAULT_SCOPE: readonly string[] = ['openid', 'email', 'profile'];
