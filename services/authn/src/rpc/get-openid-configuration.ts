/**
 * @module @gatehouse/authn/rpc/get-openid-configuration
 * AuthnService.GetOpenidConfiguration (GET /.well-known/openid-configuration): the OpenID Provider
 * Metadata of OIDC Discovery 1.0 §3.
 */
import type { AuthnHandler, RpcContext } from './deps.ts';

/** The discovery document; every URL is built from `--url`, never the Host header. */
export const getOpenidConfigurationRpc = (c: RpcContext): AuthnHandler<'GetOpenidConfiguration'> => async () => {
  const u = c.options.url;
  return {
    issuer: u,
    authorization_endpoint: `${u}/authorize`,
    token_endpoint: `${u}/oauth/token`,
    userinfo_endpoint: `${u}/userinfo`,
    jwks_uri: `${u}/.well-known/jwks.json`,
    revocation_endpoint: `${u}/oauth/revoke`,
    response_types_supported: ['code', 'token', 'id_token', 'code id_token', 'code token', 'id_token token', 'code id_token token'],
    response_modes_supported: ['query', 'fragment', 'form_post'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [c.jwt.alg],
    scopes_supported: ['openid', 'email', 'profile', 'phone', 'offline_access'],
    claims_supported: [
      'iss', 'aud', 'sub', 'iat', 'exp', 'auth_time', 'nonce', 'amr', 'acr', 'at_hash', c.options.jwtRoleClaim, 'allowed_roles', 'login_method',
      'email', 'email_verified', 'given_name', 'family_name', 'middle_name', 'nickname', 'preferred_username',
      'gender', 'birthdate', 'picture', 'phone_number', 'phone_number_verified', 'updated_at',
    ],
    grant_types_supported: ['authorization_code', 'refresh_token', 'implicit'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    code_challenge_methods_supported: ['S256', 'plain'],
  };
};
