/**
 * @module @gatehouse/authn/domain/meta
 * Meta (behaviour.md §5.2), JWKS (RFC 7517) and the OpenID Provider Metadata (OIDC Discovery 1.0 §3).
 */
import type { AuthnContext } from './deps.ts';
import { PROVIDERS, isMfaAvailable, isMfaEnforced, isProviderEnabled, usableMfaMethods } from './options.ts';

/** Meta: every field non-null. */
export function meta(c: AuthnContext): Record<string, string | boolean> {
  const o = c.options;
  const m = usableMfaMethods(o);
  const mfaAvailable = isMfaAvailable(o);
  const out: Record<string, string | boolean> = { version: o.version, client_id: o.clientId };
  for (const p of PROVIDERS) out[`is_${p}_login_enabled`] = isProviderEnabled(o, p);
  Object.assign(out, {
    is_email_verification_enabled: o.enableEmailVerification,
    is_basic_authentication_enabled: o.enableBasicAuthentication,
    is_magic_link_login_enabled: o.enableMagicLinkLogin,
    is_sign_up_enabled: o.enableSignup,
    is_strong_password_enabled: o.enableStrongPassword,
    is_multi_factor_auth_enabled: mfaAvailable,
    is_mobile_basic_authentication_enabled: o.enableMobileBasicAuthentication,
    is_phone_verification_enabled: o.enablePhoneVerification,
    is_org_discovery_enabled: o.enableOrgDiscovery,
    is_totp_mfa_enabled: mfaAvailable && m.totp,
    is_email_otp_mfa_enabled: mfaAvailable && m.emailOtp,
    is_sms_otp_mfa_enabled: mfaAvailable && m.smsOtp,
    is_webauthn_enabled: mfaAvailable && m.webauthn,
    is_mfa_enforced: isMfaEnforced(o),
  });
  return out;
}

/** OIDC Discovery 1.0 §3 document; every URL is built from `--url`, never the Host header. */
export function openidConfiguration(c: AuthnContext): Record<string, unknown> {
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
}
