import { describe, expect, it } from '@jest/globals';
import { parse, validate } from 'graphql';
import federationInternals from '@apollo/federation-internals';
import { composeSupergraph } from './compose.ts';
import { readSupergraph } from '../src/graphql/supergraph.ts';

const { Supergraph } = federationInternals;
const apiSchema = () => Supergraph.build(readSupergraph()).apiSchema().toGraphQLJSSchema();

describe('supergraph (graphql.md §5.3)', () => {
  it('the committed gateway/supergraph.graphql equals a fresh composition of the subgraph SDLs (run `npm run compose`)', () => {
    expect(readSupergraph()).toBe(composeSupergraph());
  });

  it('authorizer-js 3.0.1 operations validate against the API schema', () => {
    const api = apiSchema();
    const USER = 'id email email_verified given_name family_name middle_name nickname preferred_username picture signup_methods gender birthdate phone_number phone_number_verified roles created_at updated_at revoked_timestamp is_multi_factor_auth_enabled app_data';
    const AUTH = `message access_token expires_in refresh_token id_token should_show_email_otp_screen should_show_mobile_otp_screen should_show_totp_screen authenticator_scanner_image authenticator_secret authenticator_recovery_codes user { ${USER} }`;
    const META19 = 'version client_id is_google_login_enabled is_facebook_login_enabled is_github_login_enabled is_linkedin_login_enabled is_apple_login_enabled is_twitter_login_enabled is_microsoft_login_enabled is_twitch_login_enabled is_roblox_login_enabled is_email_verification_enabled is_basic_authentication_enabled is_magic_link_login_enabled is_sign_up_enabled is_strong_password_enabled is_multi_factor_auth_enabled is_mobile_basic_authentication_enabled is_phone_verification_enabled';
    const ops = [
      `mutation signup($data: SignUpRequest!) { signup(params: $data) { ${AUTH} } }`,
      `mutation login($data: LoginRequest!) { login(params: $data) { ${AUTH} } }`,
      `mutation verifyEmail($data: VerifyEmailRequest!) { verify_email(params: $data) { ${AUTH} } }`,
      `query getSession($params: SessionQueryRequest) { session(params: $params) { ${AUTH} } }`,
      `query { profile { ${USER} } }`,
      `query validateSession($params: ValidateSessionRequest) { validate_session(params: $params) { is_valid user { ${USER} } } }`,
      'query validateJWTToken($params: ValidateJWTTokenRequest!) { validate_jwt_token(params: $params) { is_valid claims } }',
      `query { meta { ${META19} } }`,
      'mutation forgotPassword($data: ForgotPasswordRequest!) { forgot_password(params: $data) { message should_show_mobile_otp_screen } }',
      'mutation resetPassword($data: ResetPasswordRequest!) { reset_password(params: $data) { message } }',
      'mutation magicLinkLogin($data: MagicLinkLoginRequest!) { magic_link_login(params: $data) { message } }',
      'mutation resendVerifyEmail($data: ResendVerifyEmailRequest!) { resend_verify_email(params: $data) { message } }',
      'mutation updateProfile($data: UpdateProfileRequest!) { update_profile(params: $data) { message } }',
      'mutation deactivateAccount { deactivate_account { message } }',
      'mutation { logout { message } }',
      'query {_verification_requests { verification_requests { id token email expires identifier } } }',
      'query check($params: CheckPermissionsInput!) { check_permissions(params: $params) { results { relation object allowed } } }',
      `mutation verifyOtp($data: VerifyOTPRequest!) { verify_otp(params: $data) { ${AUTH} } }`,
      'mutation resendOtp($data: ResendOTPRequest!) { resend_otp(params: $data) { message } }',
    ];
    for (const op of ops) expect({ op, errors: validate(api, parse(op)).map((e) => e.message) }).toEqual({ op, errors: [] });
  });

  it('federation internals are not exposed in the API schema', () => {
    const api = apiSchema();
    const names = Object.keys(api.getTypeMap());
    expect(names.filter((n) => /^(_Entity|_Any|_Service|link__|join__)/.test(n))).toEqual([]);
    expect(api.getQueryType()!.getFields()._entities).toBeUndefined();
  });
});
