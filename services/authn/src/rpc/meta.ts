/** @module @gatehouse/authn/rpc/meta — AuthnService.Meta (GET /v1/meta, behaviour.md §5.2): the server's features. */
import type { authn } from '@gatehouse/contracts';
import { isMfaAvailable, isMfaEnforced, isProviderEnabled, usableMfaMethods, type Provider } from '../domain/options.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/**
 * Meta, every field non-null, read from the flags. The MFA method fields are false whenever MFA is
 * not available (behaviour.md §4.1), so clients never offer a method the server will not challenge.
 */
export const metaRpc = (c: RpcContext): AuthnHandler<'Meta'> => async (): Promise<authn.Meta> => {
  const o = c.options;
  const m = usableMfaMethods(o);
  const mfa = isMfaAvailable(o);
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
    is_totp_mfa_enabled: mfa && m.totp,
    is_email_otp_mfa_enabled: mfa && m.emailOtp,
    is_sms_otp_mfa_enabled: mfa && m.smsOtp,
    is_webauthn_enabled: mfa && m.webauthn,
    is_mfa_enforced: isMfaEnforced(o),
  };
};
