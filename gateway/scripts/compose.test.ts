import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { Kind, buildSchema, isInputObjectType, isObjectType, parse, validate, type GraphQLSchema } from 'graphql';
import { SUBGRAPH_SDL } from '@gatehouse/contracts/subgraphs';
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

  it('the API schema keeps every type and field of api-schema.graphql (graphql.md §2-§3 and issues 33–35: 124 root fields) unchanged, and adds only what the protos declare', () => {
    const want = shapeOf(buildSchema(readFileSync(new URL('./api-schema.graphql', import.meta.url), 'utf8')));
    const have = shapeOf(apiSchema());
    // the fixture is a fixed anchor: adding an RPC does not edit it, so a field lost from the protos fails here
    expect(Object.keys(want.Query!).length + Object.keys(want.Mutation!).length).toBe(115 + 4 + 1 + 1 + 3);
    for (const type of Object.keys(want)) {
      if (type === 'Query' || type === 'Mutation') {
        for (const [field, shape] of Object.entries(want[type]!)) expect({ type, field, shape: have[type]?.[field] }).toEqual({ type, field, shape });
      } else {
        expect({ type, fields: have[type] }).toEqual({ type, fields: want[type] });
      }
    }
    // what the fixture lacks: root fields and types of the generated subgraphs (an RPC's GraphQL option, its messages)
    const generated = Object.values(SUBGRAPH_SDL).map((sdl) => parse(sdl));
    const declaredRoots = (op: string) => generated.flatMap((doc) => doc.definitions.flatMap((d) =>
      (d.kind === Kind.OBJECT_TYPE_DEFINITION || d.kind === Kind.OBJECT_TYPE_EXTENSION) && d.name.value === op ? (d.fields ?? []).map((f) => f.name.value) : []));
    for (const op of ['Query', 'Mutation']) expect({ op, fields: Object.keys(have[op]!).sort() }).toEqual({ op, fields: [...new Set(declaredRoots(op))].sort() });
    const declaredTypes = new Set(generated.flatMap((doc) => doc.definitions.flatMap((d) => ('name' in d && d.name ? [d.name.value] : []))));
    expect(Object.keys(have).filter((t) => !(t in want) && !declaredTypes.has(t))).toEqual([]);
  });

  it('operations on the admin, orgs and mfa subgraphs and on the moved MFA completions validate', () => {
    const api = apiSchema();
    const ops = [
      'query { _admin_meta { version roles social_providers { provider scopes } authorization_engine { is_enabled store } env } }',
      'query keys($params: ListSAMLIDPKeysRequest!) { _list_saml_idp_keys(params: $params) { id status } }',
      'mutation invite($params: InviteMemberRequest!) { _invite_members(params: $params) { message users { id } Users { id } } }',
      'query members($params: ListOrgMembersRequest!) { _org_members(params: $params) { pagination { total } org_members { user_id email roles } } }',
      'mutation { _generate_jwt_keys(params: { type: "RS256" }) { secret } }',
      'query { webauthn_credentials { id name transports last_used_at } }',
      'mutation reg($email: String, $phone_number: String) { webauthn_registration_options(email: $email, phone_number: $phone_number) { options } }',
      'mutation del($id: ID!) { webauthn_delete_credential(id: $id) { message } }',
      'mutation skip($data: SkipMfaSetupRequest!) { skip_mfa_setup(params: $data) { access_token user { id } } }',
      'mutation totp { totp_mfa_setup { authenticator_secret authenticator_recovery_codes } }',
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

/**
 * Every object and input type of `schema` (built-ins and scalars aside): field → type, with the
 * arguments of object fields (`(params: SignUpRequest!) AuthResponse!`). Descriptions and directives
 * are left out.
 */
function shapeOf(schema: GraphQLSchema): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__')) continue;
    if (isObjectType(type)) {
      out[type.name] = Object.fromEntries(Object.values(type.getFields()).map((f) => [
        f.name, `${f.args.length ? `(${f.args.map((a) => `${a.name}: ${String(a.type)}`).join(', ')}) ` : ''}${String(f.type)}`]));
    } else if (isInputObjectType(type)) {
      out[type.name] = Object.fromEntries(Object.values(type.getFields()).map((f) => [f.name, String(f.type)]));
    }
  }
  return out;
}
