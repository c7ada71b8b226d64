/**
 * @module admin/graphql/schema
 * The admin subgraph (graphql.md §5.1): the admin session and AdminMeta, webhooks, email templates,
 * the audit log, clients, trusted issuers, plus the four
 * deprecated operations that always fail (graphql.md §1.3), with the names of graphql.md §2-§3.
 * `Response`, `Pagination` and `PaginationRequest` are identical to authn's and orgs' (§5.2).
 */
import { gql } from 'graphql-tag';
import { SHARED_SCALARS_SDL } from '@gatehouse/rpc';
import { DEPRECATED_TYPES_SDL } from './deprecated.ts';

export const adminTypeDefs = gql`
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@shareable"])
  ${SHARED_SCALARS_SDL}

  type Query {
    # admin session and meta (behaviour.md §5.1, §5.2)
    _admin_session: Response!
    _admin_meta: AdminMeta!
    # webhooks (behaviour.md §5.4)
    _webhook(params: WebhookRequest!): Webhook!
    _webhooks(params: PaginationRequest): Webhooks!
    _webhook_logs(params: ListWebhookLogRequest): WebhookLogs!
    # email templates (behaviour.md §5.5)
    _email_templates(params: PaginationRequest): EmailTemplates!
    # audit log (behaviour.md §5.7)
    _audit_logs(params: ListAuditLogRequest): AuditLogs!
    # the development outbox (issue 33 §4, extension)
    _dev_outbox: DevOutboxResponse!
    # deprecated: always unimplemented (graphql.md §1.3)
    _env: Env!
  }

  type Mutation {
    # admin session and meta (behaviour.md §5.1, §5.2)
    _admin_login(params: AdminLoginRequest!): Response!
    _admin_logout: Response!
    # webhooks (behaviour.md §5.4)
    _add_webhook(params: AddWebhookRequest!): AddWebhookResponse!
    _update_webhook(params: UpdateWebhookRequest!): UpdateWebhookResponse!
    _delete_webhook(params: WebhookRequest!): Response!
    _test_endpoint(params: TestEndpointRequest!): TestEndpointResponse!
    # email templates (behaviour.md §5.5)
    _add_email_template(params: AddEmailTemplateRequest!): Response!
    _update_email_template(params: UpdateEmailTemplateRequest!): Response!
    _delete_email_template(params: DeleteEmailTemplateRequest!): Response!
    # deprecated: always unimplemented (graphql.md §1.3)
    _admin_signup(params: AdminSignupRequest!): Response!
    _update_env(params: UpdateEnvRequest!): Response!
    _generate_jwt_keys(params: GenerateJWTKeysRequest!): GenerateJWTKeysResponse!
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

  input PaginationRequest {
    limit: Int64
    page: Int64
  }

  # admin session and meta (behaviour.md §5.1, §5.2)
  type AdminMeta {
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
    roles: [String!]!
    default_roles: [String!]!
    protected_roles: [String!]!
    is_multi_factor_auth_service_enabled: Boolean!
    is_email_service_enabled: Boolean!
    is_sms_service_enabled: Boolean!
    social_providers: [SocialProviderInfo!]!
    database_type: String!
    authorization_engine: AuthorizationEngineInfo!
    env: String!
  }

  type SocialProviderInfo {
    provider: String!
    is_enabled: Boolean!
    has_client_id: Boolean!
    has_client_secret: Boolean!
    scopes: [String!]!
  }

  type AuthorizationEngineInfo {
    is_enabled: Boolean!
    store: String
    model_id: String
  }

  input AdminLoginRequest {
    admin_secret: String!
  }

  # webhooks (behaviour.md §5.4)
  type Webhook {
    id: ID!
    event_name: String
    event_description: String
    endpoint: String
    enabled: Boolean
    headers: Map
    created_at: Int64
    updated_at: Int64
  }

  type Webhooks {
    pagination: Pagination!
    webhooks: [Webhook!]!
  }

  type AddWebhookResponse {
    message: String!
    id: ID!
    signing_secret: String!
  }

  type UpdateWebhookResponse {
    message: String!
    signing_secret: String
  }

  type WebhookLog {
    id: ID!
    http_status: Int64
    response: String
    request: String
    webhook_id: ID
    delivery_id: String
    attempt: Int64
    created_at: Int64
    updated_at: Int64
  }

  type WebhookLogs {
    pagination: Pagination!
    webhook_logs: [WebhookLog!]!
  }

  type TestEndpointResponse {
    http_status: Int64
    response: String
  }

  input AddWebhookRequest {
    event_name: String!
    event_description: String
    endpoint: String!
    enabled: Boolean
    headers: Map
  }

  input UpdateWebhookRequest {
    id: ID!
    event_name: String
    event_description: String
    endpoint: String
    enabled: Boolean
    headers: Map
    rotate_signing_secret: Boolean
  }

  input WebhookRequest {
    id: ID!
  }

  input ListWebhookLogRequest {
    pagination: PaginationRequest
    webhook_id: String
  }

  input TestEndpointRequest {
    endpoint: String!
    event_name: String!
    event_description: String
    headers: Map
  }

  # email templates (behaviour.md §5.5)
  type EmailTemplate {
    id: ID!
    event_name: String!
    template: String!
    design: String!
    subject: String!
    created_at: Int64
    updated_at: Int64
  }

  type EmailTemplates {
    pagination: Pagination!
    email_templates: [EmailTemplate!]!
  }

  input AddEmailTemplateRequest {
    event_name: String!
    subject: String!
    template: String!
    design: String
  }

  input UpdateEmailTemplateRequest {
    id: ID!
    event_name: String
    template: String
    subject: String
    design: String
  }

  input DeleteEmailTemplateRequest {
    id: ID!
  }

  # audit log (behaviour.md §5.7)
  type AuditLog {
    id: ID!
    actor_id: String
    actor_type: String
    actor_email: String
    action: String
    resource_type: String
    resource_id: String
    ip_address: String
    user_agent: String
    metadata: String
    created_at: Int64
  }

  # the development outbox (issue 33 §4, extension)
  type DevOutboxMessage {
    id: ID!
    channel: String!
    to: String!
    subject: String!
    text: String!
    html: String!
    created_at: Int64!
  }

  type DevOutboxResponse {
    messages: [DevOutboxMessage!]!
  }

  type AuditLogs {
    pagination: Pagination!
    audit_logs: [AuditLog!]!
  }

  input ListAuditLogRequest {
    pagination: PaginationRequest
    action: String
    actor_id: String
    resource_type: String
    resource_id: String
    from_timestamp: Int64
    to_timestamp: Int64
  }

  ${DEPRECATED_TYPES_SDL}
`;
