import { describe, it, expect } from '@jest/globals';
import { URL_, makeAuthn } from '../fixture.ts';

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
      is_totp_mfa_enabled: true, is_email_otp_mfa_enabled: false, is_sms_otp_mfa_enabled: false, is_webauthn_enabled: true, is_mfa_enforced: false,
    });
  });

  it('follows the MFA availability rules of §4.1', async () => {
    const smtp = { smtpHost: 'h', smtpPort: 25, smtpSenderEmail: 'a@b.co' };
    expect((await makeAuthn({ ...smtp, enforceMfa: true }).call('Meta')).res).toMatchObject({ is_email_otp_mfa_enabled: true, is_mfa_enforced: true });
    const off = (await makeAuthn({ disableMfa: true, enforceMfa: true }).call('Meta')).res;
    expect(off).toMatchObject({ is_multi_factor_auth_enabled: false, is_totp_mfa_enabled: false, is_webauthn_enabled: false, is_mfa_enforced: false });
    const none = (await makeAuthn({ disableTotpLogin: true, disableWebauthnMfa: true }).call('Meta')).res;
    expect(none).toMatchObject({ is_multi_factor_auth_enabled: false });
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
      issuer: URL_, jwks_uri: `${URL_}/.well-known/jwks.json`, authorization_endpoint: `${URL_}/authorize`,
      token_endpoint: `${URL_}/oauth/token`, userinfo_endpoint: `${URL_}/userinfo`, revocation_endpoint: `${URL_}/oauth/revoke`,
      subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['ES256'], code_challenge_methods_supported: ['S256', 'plain'],
    });
    for (const k of ['response_types_supported', 'scopes_supported', 'claims_supported', 'grant_types_supported']) expect(res[k]).toEqual(expect.any(Array));
    expect(res.scopes_supported).toEqual(expect.arrayContaining(['openid', 'offline_access']));
  });
});
