/**
 * @module @gatehouse/authn/rpc/get-openid-configuration
 * AuthnService.GetOpenidConfiguration (GET /.well-known/openid-configuration): the OpenID Provider
 * Metadata of OIDC Discovery 1.0 §3, stating only what this build serves. An OIDC client library
 * follows discovery, so advertising an endpoint that answers 404 breaks it: the authorization, token,
 * userinfo and revocation endpoints and their grants, response types and modes are added by the OAuth
 * 2.0 provider issue as it serves them (test/e2e/discovery.e2e.test.ts fetches every advertised URL).
 * Until then the document is not a complete OpenID Provider's (§3 requires `authorization_endpoint`):
 * it publishes the issuer, the keys and the token claims that `validate_jwt_token` callers rely on.
 */
import type { AuthnHandler, RpcContext } from './deps.ts';

/** The discovery document; every URL is built from `--url`, never the Host header. */
export const getOpenidConfigurationRpc = (c: RpcContext): AuthnHandler<'GetOpenidConfiguration'> => async () => {
  const u = c.options.url;
  return {
    issuer: u,
    jwks_uri: `${u}/.well-known/jwks.json`,
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [c.jwt.alg],
    scopes_supported: ['openid', 'email', 'profile', 'phone', 'offline_access'],
    claims_supported: [
      'iss', 'aud', 'sub', 'iat', 'exp', 'auth_time', 'nonce', 'amr', 'acr', 'at_hash', c.options.jwtRoleClaim, 'allowed_roles', 'login_method',
      'email', 'email_verified', 'given_name', 'family_name', 'middle_name', 'nickname', 'preferred_username',
      'gender', 'birthdate', 'picture', 'phone_number', 'phone_number_verified', 'updated_at',
    ],
  };
};
