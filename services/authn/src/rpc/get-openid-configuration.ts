/**
 * @module @gatehouse/authn/rpc/get-openid-configuration
 * AuthnService.GetOpenidConfiguration (GET /.well-known/openid-configuration): the OpenID Provider
 * Metadata of OIDC Discovery 1.0 §3 and RFC 8414 §2, listing exactly the endpoints this build serves
 * (issue 18) and their real capabilities: an OIDC client library follows discovery, so every URL here
 * answers (test/e2e/discovery.e2e.test.ts fetches each one).
 */
import { DPOP_SIGNING_ALGS } from '../domain/dpop.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/** The discovery document; every URL is built from `--url`, never the Host header. */
export const getOpenidConfigurationRpc = (c: RpcContext): AuthnHandler<'GetOpenidConfiguration'> => async () => {
  const u = c.options.url;
  return {
    issuer: u,
    authorization_endpoint: `${u}/authorize`,
    token_endpoint: `${u}/oauth/token`,
    userinfo_endpoint: `${u}/userinfo`,
    revocation_endpoint: `${u}/oauth/revoke`,
    introspection_endpoint: `${u}/oauth/introspect`,
    end_session_endpoint: `${u}/logout`,
    jwks_uri: `${u}/.well-known/jwks.json`,
    response_types_supported: ['code', 'token', 'id_token', 'id_token token', 'code id_token', 'code token', 'code id_token token'],
    response_modes_supported: ['query', 'fragment', 'form_post', 'web_message'],
    grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials', 'implicit', 'urn:ietf:params:oauth:grant-type:token-exchange',
      'urn:ietf:params:oauth:grant-type:device_code'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    token_endpoint_auth_signing_alg_values_supported: ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'EdDSA'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    authorization_response_iss_parameter_supported: true,
    prompt_values_supported: ['none', 'login', 'consent'],
    ...(c.options.enableDynamicClientRegistration ? { registration_endpoint: `${u}/oauth/register` } : {}),
    // issue 34 §2: draft-ietf-oauth-client-id-metadata-document, only when served
    ...(c.options.enableClientIdMetadataDocuments === true ? { client_id_metadata_document_supported: true } : {}),
    // RFC 9126 §5
    pushed_authorization_request_endpoint: `${u}/oauth/par`,
    require_pushed_authorization_requests: c.options.requirePushedAuthorizationRequests === true,
    // RFC 8628 §4
    device_authorization_endpoint: `${u}/oauth/device_authorization`,
    // issue 34 §6: OIDC Back-Channel Logout 1.0 §2.1 (logout tokens carry `sid`) and Front-Channel
    // Logout 1.0 §3 (the iframe gets `iss` and `sid` when the client asks)
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    frontchannel_logout_supported: true,
    frontchannel_logout_session_supported: true,
    // RFC 9449 §5.1: proofs are accepted at the token endpoint and /userinfo with these algorithms
    dpop_signing_alg_values_supported: [...DPOP_SIGNING_ALGS],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [c.jwt.alg],
    // issue 34 §3: `gatehouse:write` lets a delegated token call every mutating /v1 operation (the
    // per-operation `gatehouse:<operation>` scopes are documented, not listed: RFC 8414 §2 allows that)
    scopes_supported: ['openid', 'email', 'profile', 'phone', 'offline_access', 'gatehouse:write'],
    claims_supported: [
      'iss', 'aud', 'sub', 'iat', 'exp', 'auth_time', 'nonce', 'sid', 'amr', 'acr', 'at_hash', c.options.jwtRoleClaim, 'allowed_roles', 'login_method',
      'email', 'email_verified', 'given_name', 'family_name', 'middle_name', 'nickname', 'preferred_username', 'name',
      'gender', 'birthdate', 'picture', 'phone_number', 'phone_number_verified', 'updated_at',
    ],
  };
};
