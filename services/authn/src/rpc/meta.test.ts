import { describe, it, expect } from '@jest/globals';
import { URL_, makeAuthn } from '../fixture.ts';
import { SERVED_MFA_METHODS, isMfaAvailable, isMfaEnforced, offeredMfaMethods, usableMfaMethods } from '../domain/options.ts';

describe('meta (behaviour.md §5.2)', () => {
  it('reports every field, non-null', async () => {
    const a = makeAuthn({ googleClientId: 'g', googleClientSecret: 's', githubClientId: 'only-id' });
    const { res } = await a.call('Meta');
    expect(res).toEqual({
      version: '2.3.0', client_id: 'client-123',
      is_google_login_enabled: true, is_facebook_login_enabled: false, is_github_login_enabled: false, is_linkedin_login_enabled: false,
      is_apple_login_enabled: false, is_discord_login_enabled: false, is_twitter_login_enabled: false, is_microsoft_login_enabled: false,
      is_twitch_login_enabled: false, is_roblox_login_enabled: false,
      is_email_verification_enabled: false, is_basic_authentication_enabled: true, is_magic_link_login_enabled: false,
      is_sign_up_enabled: true, is_strong_password_enabled: true, is_multi_factor_auth_enabled: true,
      is_mobile_basic_authentication_enabled: true, is_phone_verification_enabled: false, is_org_discovery_enabled: false,
      // TOTP and passkeys are usable without flags and served; email OTP needs SMTP, SMS OTP Twilio
      is_totp_mfa_enabled: true, is_email_otp_mfa_enabled: false, is_sms_otp_mfa_enabled: false, is_webauthn_enabled: true, is_mfa_enforced: false,
    });
  });

  it('reports each served method the flags make usable, and no method this build does not serve (§4.1)', async () => {
    const smtp = { smtpHost: 'h', smtpPort: 25, smtpSenderEmail: 'a@b.co' };
    const twilio = { twilioAccountSid: 'AC1', twilioApiKey: 'k', twilioApiSecret: 's', twilioSender: '+15550100' };
    const everything = (await makeAuthn({ ...smtp, ...twilio, enforceMfa: true }).call('Meta')).res;
    expect(everything).toMatchObject({
      is_multi_factor_auth_enabled: true, is_totp_mfa_enabled: true, is_email_otp_mfa_enabled: true,
      is_sms_otp_mfa_enabled: true, is_webauthn_enabled: true, is_mfa_enforced: true,
    });
    const noSms = (await makeAuthn({ ...twilio, disableSmsOtp: true }).call('Meta')).res;
    expect(noSms).toMatchObject({ is_sms_otp_mfa_enabled: false });
    const noTotp = (await makeAuthn({ ...smtp, disableTotpLogin: true }).call('Meta')).res;
    expect(noTotp).toMatchObject({ is_totp_mfa_enabled: false, is_email_otp_mfa_enabled: true });
    const off = (await makeAuthn({ ...smtp, enforceMfa: true, disableMfa: true }).call('Meta')).res;
    expect(off).toMatchObject({ is_multi_factor_auth_enabled: false, is_totp_mfa_enabled: false, is_email_otp_mfa_enabled: false, is_mfa_enforced: false });
    // --disable-webauthn-mfa turns passkeys off as a method (§4.1 "usable")
    expect((await makeAuthn({ disableWebauthnMfa: true }).call('Meta')).res).toMatchObject({ is_webauthn_enabled: false });
  });

  it('keeps the §4.1 rules of which methods the flags make usable', () => {
    const base = makeAuthn().options;
    const smtp = { smtpHost: 'h', smtpPort: 25, smtpSenderEmail: 'a@b.co' };
    expect(usableMfaMethods(base)).toEqual({ totp: true, webauthn: true, emailOtp: false, smsOtp: false });
    expect(usableMfaMethods({ ...base, ...smtp })).toMatchObject({ emailOtp: true });
    expect(isMfaAvailable({ ...base, disableTotpLogin: true, disableWebauthnMfa: true })).toBe(false);
    expect(isMfaEnforced({ ...base, disableMfa: true, enforceMfa: true })).toBe(false);
    // a method is offered only when usable and served
    expect(offeredMfaMethods(base)).toEqual({ totp: SERVED_MFA_METHODS.totp, webauthn: SERVED_MFA_METHODS.webauthn, emailOtp: false, smsOtp: false });
  });
});

describe('GetJwks and GetOpenidConfiguration', () => {
  it('publishes the public signing key', async () => {
    const a = makeAuthn();
    const { res } = await a.call('GetJwks');
    expect(res.keys).toHaveLength(1);
    expect(res.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', kid: a.jwt.kid, alg: 'ES256', use: 'sig' });
    expect(res.keys[0]).not.toHaveProperty('d');
  });

  it('serves an OIDC Discovery 1.0 document built from --url', async () => {
    const a = makeAuthn();
    const { res } = await a.call('GetOpenidConfiguration');
    expect(res).toMatchObject({
      issuer: URL_, jwks_uri: `${URL_}/.well-known/jwks.json`,
      subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['ES256'],
    });
    // issue 18: the endpoints it serves, with their real capabilities
    expect(res).toMatchObject({
      authorization_endpoint: `${URL_}/authorize`, token_endpoint: `${URL_}/oauth/token`, userinfo_endpoint: `${URL_}/userinfo`,
      revocation_endpoint: `${URL_}/oauth/revoke`, introspection_endpoint: `${URL_}/oauth/introspect`, end_session_endpoint: `${URL_}/logout`,
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    });
    expect(res.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token', 'client_credentials']));
    for (const k of ['scopes_supported', 'claims_supported']) expect(res[k]).toEqual(expect.any(Array));
    expect(res.scopes_supported).toEqual(expect.arrayContaining(['openid', 'offline_access']));
  });
});
