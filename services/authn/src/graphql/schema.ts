/**
 * @module authn/graphql/schema
 * The authn subgraph: root fields, argument names and nullability, and type names exactly as
 * graphql.md §2-§3 give them, so existing Authorizer clients (authorizer-js) work unchanged. Besides
 * graphql.md §5.1's authn fields it serves the MFA completions that issue a session (verify_otp,
 * skip_mfa_setup, webauthn_registration_verify, webauthn_login_verify), and the MFA operations that
 * change the user or need its record (lock_mfa and the email/SMS/TOTP setups, issue 16): authn alone issues sessions
 * (issue 14). The composed API schema is the same wherever a root field lives.
 */
import { gql } from 'graphql-tag';
import { AUTH_RESPONSE_SDL, SHARED_SCALARS_SDL } from '@gatehouse/rpc';

export const authnTypeDefs = gql`
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key", "@shareable"])
  ${SHARED_SCALARS_SDL}

  type Query {
    meta: Meta!
    session(params: SessionQueryRequest): AuthResponse!
    profile: User!
    validate_jwt_token(params: ValidateJWTTokenRequest!): ValidateJWTTokenResponse!
    validate_session(params: ValidateSessionRequest): ValidateSessionResponse!
    _users(params: ListUsersRequest): Users!
    _user(params: GetUserRequest!): User!
    _verification_requests(params: PaginationRequest): VerificationRequests!
    # clients and trusted issuers (behaviour.md §5.8; owned by authn since issue 18)
    _client(params: ClientRequest!): Client!
    _clients(params: ListClientsRequest): Clients!
    _trusted_issuer(params: TrustedIssuerRequest!): TrustedIssuer!
    _trusted_issuers(params: ListTrustedIssuersRequest): TrustedIssuers!
    # consents given to OAuth clients at /authorize (issue 34)
    consent_grants(params: ConsentGrantsRequest): ConsentGrants!
    _user_consent_grants(params: UserConsentGrantsRequest!): ConsentGrants!
  }

  type Mutation {
    signup(params: SignUpRequest!): AuthResponse!
    mobile_signup(params: MobileSignUpRequest): AuthResponse!
    login(params: LoginRequest!): AuthResponse!
    mobile_login(params: MobileLoginRequest!): AuthResponse!
    magic_link_login(params: MagicLinkLoginRequest!): Response!
    logout: Response!
    update_profile(params: UpdateProfileRequest!): Response!
    verify_email(params: VerifyEmailRequest!): AuthResponse!
    resend_verify_email(params: ResendVerifyEmailRequest!): Response!
    forgot_password(params: ForgotPasswordRequest!): ForgotPasswordResponse!
    reset_password(params: ResetPasswordRequest!): Response!
    revoke(params: OAuthRevokeRequest!): Response!
    deactivate_account: Response!
    _delete_user(params: DeleteUserRequest!): Response!
    _update_user(params: UpdateUserRequest!): User!
    _revoke_access(param: UpdateAccessRequest!): Response!
    _enable_access(param: UpdateAccessRequest!): Response!
    _invite_members(params: InviteMemberRequest!): InviteMembersResponse!
    # clients and trusted issuers (behaviour.md §5.8; owned by authn since issue 18)
    _create_client(params: CreateClientRequest!): CreateClientResponse!
    _update_client(params: UpdateClientRequest!): Client!
    _delete_client(params: ClientRequest!): Response!
    _rotate_client_secret(params: ClientRequest!): CreateClientResponse!
    _add_trusted_issuer(params: AddTrustedIssuerRequest!): TrustedIssuer!
    _update_trusted_issuer(params: UpdateTrustedIssuerRequest!): TrustedIssuer!
    _delete_trusted_issuer(params: TrustedIssuerRequest!): Response!
    revoke_consent_grant(params: ConsentGrantRequest!): Response!
    _revoke_user_consent_grant(params: ConsentGrantRequest!): Response!
    verify_otp(params: VerifyOTPRequest!): AuthResponse!
    skip_mfa_setup(params: SkipMfaSetupRequest!): AuthResponse!
    lock_mfa(params: LockMfaRequest!): Response!
    email_otp_mfa_setup(params: OtpMfaSetupRequest): Response!
    sms_otp_mfa_setup(params: OtpMfaSetupRequest): Response!
    totp_mfa_setup(params: OtpMfaSetupRequest): AuthResponse!
    webauthn_registration_verify(params: WebauthnRegistrationVerifyRequest!): AuthResponse!
    webauthn_login_verify(params: WebauthnLoginVerifyRequest!): AuthResponse!
  }

  type Response @shareable {
    message: String!
  }

  type Pagination @shareable {
    limit: Int64!
    page: Int64!
    offset: Int64!
    total: Int64!
  }

  type Meta {
    version: String!
    client_id: String!
    is_google_login_enabled: Boolean!
    is_facebook_login_enabled: Boolean!
    is_github_login_enabled: Boolean!
    is_linkedin_login_enabled: Boolean!
    is_apple_login_enabled: Boolean!
    is_discord_login_enabled: Boolean!
    is_twitter_login_enabled: Boolean!
    is_microsoft_login_enabled: Boolean!
    is_twitch_login_enabled: Boolean!
    is_roblox_login_enabled: Boolean!
    is_email_verification_enabled: Boolean!
    is_basic_authentication_enabled: Boolean!
    is_magic_link_login_enabled: Boolean!
    is_sign_up_enabled: Boolean!
    is_strong_password_enabled: Boolean!
    is_multi_factor_auth_enabled: Boolean!
    is_mobile_basic_authentication_enabled: Boolean!
    is_phone_verification_enabled: Boolean!
    is_org_discovery_enabled: Boolean!
    is_totp_mfa_enabled: Boolean!
    is_email_otp_mfa_enabled: Boolean!
    is_sms_otp_mfa_enabled: Boolean!
    is_webauthn_enabled: Boolean!
    is_mfa_enforced: Boolean!
  }

  type User @key(fields: "id") {
    id: ID!
    email: String
    email_verified: Boolean!
    signup_methods: String!
    given_name: String
    family_name: String
    middle_name: String
    nickname: String
    preferred_username: String
    gender: String
    birthdate: String
    phone_number: String
    phone_number_verified: Boolean!
    picture: String
    roles: [String!]!
    created_at: Int64
    updated_at: Int64
    revoked_timestamp: Int64
    is_multi_factor_auth_enabled: Boolean
    has_skipped_mfa_setup_at: Int64
    mfa_locked_at: Int64
    enrolled_mfa_methods: [String!]!
    app_data: Map
  }

  ${AUTH_RESPONSE_SDL}

  type ForgotPasswordResponse {
    message: String!
    should_show_mobile_otp_screen: Boolean
  }

  type ValidateJWTTokenResponse {
    is_valid: Boolean!
    claims: Map
  }

  type ValidateSessionResponse {
    is_valid: Boolean!
    user: User!
  }

  type Users {
    pagination: Pagination!
    users: [User!]!
  }

  type VerificationRequest {
    id: ID!
    identifier: String
    token: String
    email: String
    expires: Int64
    created_at: Int64
    updated_at: Int64
    nonce: String
    redirect_uri: String
  }

  type VerificationRequests {
    pagination: Pagination!
    verification_requests: [VerificationRequest!]!
  }

  type InviteMembersResponse {
    message: String!
    users: [User!]!
    Users: [User!]! @deprecated(reason: "use users")
  }

  input PaginationRequest {
    limit: Int64
    page: Int64
  }

  input SignUpRequest {
    email: String
    given_name: String
    family_name: String
    middle_name: String
    nickname: String
    gender: String
    birthdate: String
    phone_number: String
    picture: String
    password: String!
    confirm_password: String!
    roles: [String!]
    scope: [String!]
    redirect_uri: String
    state: String
    app_data: Map
    is_multi_factor_auth_enabled: Boolean @deprecated(reason: "accepted and ignored")
  }

  input MobileSignUpRequest {
    email: String
    given_name: String
    family_name: String
    middle_name: String
    nickname: String
    gender: String
    birthdate: String
    phone_number: String!
    picture: String
    password: String!
    confirm_password: String!
    roles: [String!]
    scope: [String!]
    redirect_uri: String
    state: String
    app_data: Map
  }

  input LoginRequest {
    email: String
    phone_number: String
    password: String!
    roles: [String!]
    scope: [String!]
    state: String
  }

  input MobileLoginRequest {
    phone_number: String!
    password: String!
    roles: [String!]
    scope: [String!]
    state: String
  }

  input MagicLinkLoginRequest {
    email: String!
    roles: [String!]
    scope: [String!]
    state: String
    redirect_uri: String
  }

  input VerifyEmailRequest {
    token: String!
    state: String
  }

  input ResendVerifyEmailRequest {
    email: String!
    identifier: String!
    state: String
  }

  input ForgotPasswordRequest {
    email: String
    phone_number: String
    state: String
    redirect_uri: String
  }

  input ResetPasswordRequest {
    token: String
    otp: String
    phone_number: String
    password: String!
    confirm_password: String!
  }

  input UpdateProfileRequest {
    old_password: String
    new_password: String
    confirm_new_password: String
    email: String
    given_name: String
    family_name: String
    middle_name: String
    nickname: String
    gender: String
    birthdate: String
    phone_number: String
    picture: String
    is_multi_factor_auth_enabled: Boolean
    app_data: Map
  }

  input FgaRelationInput {
    relation: String!
    object: String!
  }

  input SessionQueryRequest {
    roles: [String!]
    scope: [String!]
    state: String
    required_relations: [FgaRelationInput!]
  }

  input ValidateJWTTokenRequest {
    token_type: String!
    token: String!
    roles: [String!]
    required_relations: [FgaRelationInput!]
  }

  input ValidateSessionRequest {
    cookie: String!
    roles: [String!]
    required_relations: [FgaRelationInput!]
  }

  input OAuthRevokeRequest {
    refresh_token: String!
  }

  input ListUsersRequest {
    pagination: PaginationRequest
    query: String
  }

  input GetUserRequest {
    id: String
    email: String
  }

  input UpdateUserRequest {
    id: ID!
    email: String
    email_verified: Boolean
    given_name: String
    family_name: String
    middle_name: String
    nickname: String
    gender: String
    birthdate: String
    phone_number: String
    phone_number_verified: Boolean
    picture: String
    roles: [String]
    is_multi_factor_auth_enabled: Boolean
    reset_mfa: Boolean
    app_data: Map
  }

  input DeleteUserRequest {
    email: String
    id: String
  }

  input UpdateAccessRequest {
    user_id: String!
  }

  input InviteMemberRequest {
    emails: [String!]!
    redirect_uri: String
  }

  input VerifyOTPRequest {
    email: String
    phone_number: String
    otp: String!
    is_totp: Boolean
    state: String
  }

  input SkipMfaSetupRequest {
    email: String
    phone_number: String
    state: String
  }

  input LockMfaRequest {
    email: String
    phone_number: String
  }

  input OtpMfaSetupRequest {
    email: String
    phone_number: String
  }

  input WebauthnRegistrationVerifyRequest {
    name: String
    credential: String!
    email: String
    phone_number: String
    state: String
  }

  input WebauthnLoginVerifyRequest {
    state: String
    credential: String!
  }

  # clients and trusted issuers (behaviour.md §5.8)
  type Client {
    id: ID!
    client_id: String!
    name: String!
    description: String
    allowed_scopes: [String!]!
    is_active: Boolean!
    created_at: Int64
    updated_at: Int64
  }

  type CreateClientResponse {
    client: Client!
    client_secret: String!
  }

  type Clients {
    pagination: Pagination!
    clients: [Client!]!
  }

  type TrustedIssuer {
    id: ID!
    service_account_id: String!
    name: String!
    issuer_url: String!
    key_source_type: String!
    jwks_url: String
    expected_aud: String!
    subject_claim: String!
    allowed_subjects: String
    issuer_type: String!
    is_active: Boolean!
    spiffe_refresh_hint_seconds: Int64
    enable_token_review: Boolean!
    kubernetes_api_server_url: String
    created_at: Int64
    updated_at: Int64
  }

  type TrustedIssuers {
    pagination: Pagination!
    trusted_issuers: [TrustedIssuer!]!
  }

  # consents given to OAuth clients at /authorize (issue 34)
  type ConsentGrant {
    id: ID!
    user_id: String!
    client_id: String!
    client_name: String!
    scopes: [String!]!
    created_at: Int64!
    updated_at: Int64!
  }

  type ConsentGrants {
    pagination: Pagination!
    consent_grants: [ConsentGrant!]!
  }

  input ConsentGrantsRequest {
    pagination: PaginationRequest
  }

  input UserConsentGrantsRequest {
    user_id: ID!
    pagination: PaginationRequest
  }

  input ConsentGrantRequest {
    id: ID!
  }

  input CreateClientRequest {
    name: String!
    description: String
    allowed_scopes: [String!]!
  }

  input UpdateClientRequest {
    id: ID!
    name: String
    description: String
    allowed_scopes: [String!]
    is_active: Boolean
  }

  input ClientRequest {
    id: ID!
  }

  input ListClientsRequest {
    pagination: PaginationRequest
  }

  input AddTrustedIssuerRequest {
    service_account_id: String!
    name: String!
    issuer_url: String!
    key_source_type: String!
    jwks_url: String
    expected_aud: String!
    subject_claim: String
    allowed_subjects: String
    issuer_type: String!
    spiffe_refresh_hint_seconds: Int64
    enable_token_review: Boolean
    kubernetes_api_server_url: String
  }

  input UpdateTrustedIssuerRequest {
    id: ID!
    name: String
    jwks_url: String
    expected_aud: String
    allowed_subjects: String
    is_active: Boolean
    spiffe_refresh_hint_seconds: Int64
    enable_token_review: Boolean
    kubernetes_api_server_url: String
  }

  input TrustedIssuerRequest {
    id: ID!
  }

  input ListTrustedIssuersRequest {
    service_account_id: String
    pagination: PaginationRequest
  }
`;
