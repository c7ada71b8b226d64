/** @module @gatehouse/authn/rpc/meta — AuthnService.Meta (GET /v1/meta, behaviour.md §5.2): the server's features. */
import type { authn } from '@gatehouse/contracts';
import { isProviderEnabled, offeredMfaMethods, type Provider } from '../domain/options.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/**
 * Meta, every field non-null, read from the flags. An MFA method is reported only when the flags make
 * it usable (behaviour.md §4.1) and this build serves it (`SERVED_MFA_METHODS`), so clients never
 * offer a method the server will not challenge; `is_multi_factor_auth_enabled` and `is_mfa_enforced`
 * follow the methods reported.
 */
export const metaRpc = (c: RpcContext): AuthnHandler<'Meta'> => async (): Promise<authn.Meta> => {
  const o = c.options;
  const m = offeredMfaMethods(o);
  const mfa = m.totp || m.webauthn || m.emailOtp || m.smsOtp;
  const provider = (p: Provider): boolean => isProviderEnabled(o, p);
  return {
    version: o.version,
    client_id: o.clientId,
    is_google_login_enabled: provider('google'),
    is_facebook_login_enabled: provider('facebook'),
    is_github_login_enabled: provider('github'),
    is_linkedin_login_enabled: provider('linkedin'),
    is_apple_login_enabled: provider('apple'),
    is_discord_login_enabled: provider('discord'),
    is_twitter_login_enabled: provider('twitter'),
    is_microsoft_login_enabled: provider('microsoft'),
    is_twitch_login_enabled: provider('twitch'),
    is_roblox_login_enabled: provider('roblox'),
    is_email_verification_enabled: o.enableEmailVerification,
    is_basic_authentication_enabled: o.enableBasicAuthentication,
    is_magic_link_login_enabled: o.enableMagicLinkLogin,
    is_sign_up_enabled: o.enableSignup,
    is_strong_password_enabled: o.enableStrongPassword,
    is_multi_factor_auth_enabled: mfa,
    is_mobile_basic_authentication_enabled: o.enableMobileBasicAuthentication,
    is_phone_verification_enabled: o.enablePhoneVerification,
    is_org_discovery_enabled: o.enableOrgDiscovery,
    is_totp_mfa_enabled: m.totp,
    is_email_otp_mfa_enabled: m.emailOtp,
    is_sms_otp_mfa_enabled: m.smsOtp,
    is_webauthn_enabled: m.webauthn,
    is_mfa_enforced: o.enforceMfa && mfa,
  };
};
