/**
 * @module @gatehouse/authn/domain/resource
 * RFC 8707 resource indicators: the `resource` parameter of an authorization request (§2.1) and of a
 * token request (§2.2) names the protected resource the access token is for, and becomes its `aud`
 * (RFC 9068 §3). Gatehouse's own `/mcp` endpoint (issue 34 §7) accepts only tokens whose `aud` names it.
 */
import { OAuthError } from './oauth-client-auth.ts';

/**
 * Why `value` cannot be a resource indicator (RFC 8707 §2: an absolute URI without a fragment), or
 * null when it can.
 * @returns the `error_description` of an `invalid_target` refusal, or null
 */
export function resourceProblem(value: string): string | null {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return 'resource must be an absolute URI';
  }
  if (u.hash !== '' || value.includes('#')) return 'resource must not have a fragment';
  return null;
}

/**
 * The `resource` of a request's parameters, checked (RFC 8707 §2). One value: a parameter given twice
 * keeps its first value (the OAuth endpoints' parameter rule), so a token names at most one resource.
 * @returns the resource, or null when the parameter is absent or empty
 * @throws OAuthError `invalid_target` for a relative URI or one with a fragment
 */
export function resourceOf(p: Record<string, string>): string | null {
  const resource = p.resource ?? '';
  if (resource === '') return null;
  const problem = resourceProblem(resource);
  if (problem !== null) throw new OAuthError('invalid_target', problem);
  return resource;
}

/**
 * The audience of the access token a token request gets (RFC 8707 §2.2): the `resource` it asks for,
 * which must be one the authorization grant named, else every resource the grant named.
 * @param granted the resources of the authorization request (or of the refresh token), [] when none
 * @returns the audience, or [] when neither named one (the token's `aud` is then the client)
 * @throws OAuthError `invalid_target` for a bad `resource` or one the grant did not name
 */
export function audienceOf(p: Record<string, string>, granted: readonly string[]): string[] {
  const asked = resourceOf(p);
  if (asked === null) return [...granted];
  if (!granted.includes(asked)) throw new OAuthError('invalid_target', 'resource was not part of the authorization request');
  return [asked];
}
