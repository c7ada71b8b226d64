/**
 * @module gateway/routes/table The one REST route table (ARCHITECTURE §3): method, path, owning
 * service and RPC. It drives routing, 404/405 answers, metric labels and the OpenAPI document. Who may
 * call a route is its RPC's, declared once in proto/ and read here, never written twice (issue 14 §2).
 */
import { serviceDescriptor, type AuthClass as RpcAuthClass, type ServiceName } from '@gatehouse/rpc';

export type { ServiceName } from '@gatehouse/rpc';

export type HttpMethod = 'GET' | 'POST';
/**
 * Who may call a route (spec §5): its RPC's `(gatehouse.common.v1.auth)` option (see AuthClass in
 * @gatehouse/rpc). `internal` RPCs are never routed.
 */
export type AuthClass = Exclude<RpcAuthClass, 'internal'>;

export interface Route {
  readonly method: HttpMethod;
  readonly path: string;
  /** owning service (ARCHITECTURE §2: a route belongs to the service that owns its data) */
  readonly service: ServiceName;
  /** proto method: the GraphQL field without underscores, PascalCase (`_fga_write_model` → `WriteModel`) */
  readonly rpc: string;
  readonly auth: AuthClass;
  readonly summary: string;
  /** the GraphQL root field with the same request and response fields (spec §1), if any */
  readonly graphqlField?: string;
}

/** `_fga_write_model` → `WriteModel`, `validate_jwt_token` → `ValidateJwtToken`, `_users` → `Users`. */
export function rpcNameOf(graphqlField: string): string {
  return graphqlField.replace(/^_/, '').replace(/^fga_/, '')
    .split('_').filter((p) => p !== '').map((p) => p[0]!.toUpperCase() + p.slice(1)).join('');
}

/**
 * The auth class of `service.rpc`, from its proto.
 * @throws Error when the RPC does not exist or is internal (a table bug, found at startup)
 */
function authOf(service: ServiceName, rpc: string): AuthClass {
  const auth = serviceDescriptor(service).methods.get(rpc)?.auth;
  if (auth === undefined || auth === 'internal') throw new Error(`route to ${service}.${rpc}: no such public RPC in the proto`);
  return auth;
}

function route(method: HttpMethod, path: string, service: ServiceName, rpc: string, summary: string, graphqlField?: string): Route {
  return { method, path, service, rpc, auth: authOf(service, rpc), summary, ...(graphqlField === undefined ? {} : { graphqlField }) };
}
const r = (method: HttpMethod, path: string, service: ServiceName, field: string, summary: string): Route =>
  route(method, path, service, rpcNameOf(field), summary, field);
const P = (path: string, service: ServiceName, field: string, summary: string): Route => r('POST', path, service, field, summary);
/** An admin route (`/v1/admin/<name>`), super-admin or, where its RPC says so, an organization's admin. */
const A = (name: string, service: ServiceName, summary: string, field = `_${name}`): Route =>
  r('POST', `/v1/admin/${name}`, service, field, summary);
const O = A;

/** Every REST route of spec §4, plus the two discovery documents and the email link target outside /v1. */
export const ROUTES: readonly Route[] = Object.freeze([
  // Public endpoints (spec §4). The MFA completions that issue a session are authn's (issue 14
  // "flows go one way": authn alone issues sessions).
  P('/v1/signup', 'authn', 'signup', 'Register a user; returns AuthResponse'),
  P('/v1/login', 'authn', 'login', 'Log in with email or phone and password; returns AuthResponse or an MFA challenge'),
  P('/v1/magic_link_login', 'authn', 'magic_link_login', 'Start passwordless login; emails a magic link'),
  P('/v1/verify_email', 'authn', 'verify_email', 'Complete email verification; returns AuthResponse'),
  P('/v1/resend_verify_email', 'authn', 'resend_verify_email', 'Re-send the verification message'),
  P('/v1/verify_otp', 'authn', 'verify_otp', 'Complete an MFA challenge with an OTP or TOTP code; returns AuthResponse'),
  P('/v1/resend_otp', 'mfa', 'resend_otp', 'Re-send the MFA OTP'),
  P('/v1/skip_mfa_setup', 'authn', 'skip_mfa_setup', 'Decline MFA setup and receive the withheld tokens'),
  P('/v1/lock_mfa', 'authn', 'lock_mfa', 'Record lost MFA factors and lock the account'),
  P('/v1/email_otp_mfa_setup', 'authn', 'email_otp_mfa_setup', 'Start email OTP enrollment'),
  P('/v1/sms_otp_mfa_setup', 'authn', 'sms_otp_mfa_setup', 'Start SMS OTP enrollment'),
  P('/v1/totp_mfa_setup', 'authn', 'totp_mfa_setup', 'Start TOTP enrollment: secret, QR image and recovery codes'),
  P('/v1/webauthn_registration_options', 'mfa', 'webauthn_registration_options', 'WebAuthn creation options'),
  P('/v1/webauthn_registration_verify', 'authn', 'webauthn_registration_verify', 'Register a passkey; returns AuthResponse'),
  P('/v1/webauthn_login_options', 'mfa', 'webauthn_login_options', 'WebAuthn request options'),
  P('/v1/webauthn_login_verify', 'authn', 'webauthn_login_verify', 'Log in with a passkey assertion'),
  P('/v1/webauthn_credentials', 'mfa', 'webauthn_credentials', "List the caller's passkeys"),
  P('/v1/webauthn_delete_credential', 'mfa', 'webauthn_delete_credential', "Delete one of the caller's passkeys"),
  P('/v1/forgot_password', 'authn', 'forgot_password', 'Start password reset'),
  P('/v1/reset_password', 'authn', 'reset_password', 'Set a new password with the reset token'),
  P('/v1/logout', 'authn', 'logout', 'Invalidate the current session'),
  r('GET', '/v1/profile', 'authn', 'profile', "The caller's User"),
  P('/v1/update_profile', 'authn', 'update_profile', "Update the caller's profile"),
  P('/v1/deactivate_account', 'authn', 'deactivate_account', "Deactivate the caller's account"),
  P('/v1/session', 'authn', 'session', 'Refresh or fetch the current session; returns AuthResponse'),
  P('/v1/revoke', 'authn', 'revoke', 'Revoke a refresh token'),
  P('/v1/validate_jwt_token', 'authn', 'validate_jwt_token', 'Validate a JWT and optional required relations'),
  P('/v1/validate_session', 'authn', 'validate_session', 'Validate a session cookie and optional required relations'),
  r('GET', '/v1/meta', 'authn', 'meta', 'Server capabilities (Meta)'),
  // Permissions (spec §4)
  P('/v1/check_permissions', 'authz', 'check_permissions', 'Evaluate 1 to 100 permission checks'),
  P('/v1/list_permissions', 'authz', 'list_permissions', 'List the permissions the subject holds'),
  // Admin authentication
  P('/v1/admin/login', 'admin', '_admin_login', 'Log in as super-admin; sets the admin session cookie'),
  P('/v1/admin/logout', 'admin', '_admin_logout', 'End the admin session'),
  r('GET', '/v1/admin/session', 'admin', '_admin_session', 'Verify the admin session'),
  r('GET', '/v1/admin/meta', 'admin', '_admin_meta', 'Meta plus admin-only fields'),
  // Admin: users and access (owned by authn)
  A('users', 'authn', 'List users'),
  A('user', 'authn', 'Get a user by id or email'),
  A('update_user', 'authn', 'Update a user'),
  A('delete_user', 'authn', 'Delete a user'),
  A('verification_requests', 'authn', 'List verification requests'),
  A('revoke_access', 'authn', "Revoke a user's access"),
  A('enable_access', 'authn', "Re-enable a user's access"),
  A('invite_members', 'authn', 'Invite users by email'),
  // Admin: webhooks, email templates, audit logs
  A('add_webhook', 'admin', 'Register a webhook'),
  A('update_webhook', 'admin', 'Update a webhook'),
  A('delete_webhook', 'admin', 'Delete a webhook'),
  A('webhook', 'admin', 'Get a webhook'),
  A('webhooks', 'admin', 'List webhooks'),
  A('webhook_logs', 'admin', 'List webhook deliveries'),
  A('test_endpoint', 'admin', 'Simulate an event against an endpoint'),
  A('add_email_template', 'admin', 'Add an email template'),
  A('update_email_template', 'admin', 'Update an email template'),
  A('delete_email_template', 'admin', 'Delete an email template'),
  A('email_templates', 'admin', 'List email templates'),
  A('audit_logs', 'admin', 'List audit log entries'),
  // Admin: authorization engine (owned by authz)
  r('GET', '/v1/admin/fga/model', 'authz', '_fga_get_model', 'The active authorization model'),
  r('POST', '/v1/admin/fga/model', 'authz', '_fga_write_model', 'Install a new authorization model version'),
  A('fga/tuples', 'authz', 'Write relationship tuples', '_fga_write_tuples'),
  A('fga/tuples/delete', 'authz', 'Delete relationship tuples', '_fga_delete_tuples'),
  A('fga/tuples/read', 'authz', 'Read relationship tuples', '_fga_read_tuples'),
  A('fga/list_users', 'authz', 'List users with a relation to an object', '_fga_list_users'),
  A('fga/expand', 'authz', 'Expand a userset tree', '_fga_expand'),
  A('fga/reset', 'authz', 'Delete the whole store (refused while tuples exist)', '_fga_reset'),
  // Admin: clients and trusted issuers (owned by authn since issue 18: ARCHITECTURE §2)
  A('create_client', 'authn', 'Create a client; returns its secret once'),
  A('update_client', 'authn', 'Update a client'),
  A('delete_client', 'authn', 'Delete a client and its trusted issuers'),
  A('rotate_client_secret', 'authn', 'Rotate a client secret; returns it once'),
  A('client', 'authn', 'Get a client'),
  A('clients', 'authn', 'List clients'),
  A('add_trusted_issuer', 'authn', 'Add a trusted token issuer'),
  A('update_trusted_issuer', 'authn', 'Update a trusted issuer'),
  A('delete_trusted_issuer', 'authn', 'Delete a trusted issuer'),
  A('trusted_issuer', 'authn', 'Get a trusted issuer'),
  A('trusted_issuers', 'authn', 'List trusted issuers'),
  // SAML identity-provider role (org-scoped; the metadata import is super-admin only: behaviour.md §5.9), orgs' since issue 20
  O('create_saml_service_provider', 'orgs', 'Create a SAML service provider'),
  O('update_saml_service_provider', 'orgs', 'Update a SAML service provider'),
  O('delete_saml_service_provider', 'orgs', 'Delete a SAML service provider'),
  O('saml_service_provider', 'orgs', 'Get a SAML service provider'),
  O('saml_service_providers', 'orgs', "List an organization's SAML service providers", '_list_saml_service_providers'),
  O('rotate_saml_idp_cert', 'orgs', 'Rotate the SAML IdP signing key'),
  O('retire_saml_idp_key', 'orgs', 'Retire a published, non-signing SAML IdP key'),
  O('saml_idp_keys', 'orgs', "List an organization's SAML IdP keys", '_list_saml_idp_keys'),
  A('import_saml_sp_metadata', 'orgs', 'Parse pasted SAML SP metadata'),
  // Admin: organizations, domains, SSO connections, SCIM (owned by orgs; org admin allowed on
  // the org-scoped ones: behaviour.md §6.1-§6.4; create/delete/list organizations, user_organizations
  // and add_verified_org_domain are super-admin only)
  A('create_organization', 'orgs', 'Create an organization'),
  O('update_organization', 'orgs', 'Update an organization'),
  A('delete_organization', 'orgs', 'Delete an organization and its scoped records'),
  O('organization', 'orgs', 'Get an organization'),
  A('organizations', 'orgs', 'List organizations'),
  O('add_org_member', 'orgs', 'Add a member with org roles'),
  O('remove_org_member', 'orgs', 'Remove a member'),
  O('org_members', 'orgs', "List an organization's members"),
  A('user_organizations', 'orgs', "List a user's organizations"),
  O('request_org_domain', 'orgs', 'Request a domain; returns the DNS TXT challenge'),
  O('verify_org_domain', 'orgs', 'Verify a domain by DNS'),
  A('add_verified_org_domain', 'orgs', 'Add a domain without a DNS check'),
  O('delete_org_domain', 'orgs', 'Delete a domain'),
  O('org_domains', 'orgs', "List an organization's domains"),
  O('create_org_oidc_connection', 'orgs', 'Create the OIDC connection'),
  O('update_org_oidc_connection', 'orgs', 'Update the OIDC connection'),
  O('delete_org_oidc_connection', 'orgs', 'Delete the OIDC connection'),
  O('org_oidc_connection', 'orgs', 'Get the OIDC connection'),
  O('create_org_saml_connection', 'orgs', 'Create the SAML connection'),
  O('update_org_saml_connection', 'orgs', 'Update the SAML connection'),
  O('delete_org_saml_connection', 'orgs', 'Delete the SAML connection'),
  O('org_saml_connection', 'orgs', 'Get the SAML connection'),
  O('create_scim_endpoint', 'orgs', 'Create the SCIM endpoint; returns its bearer token once'),
  O('rotate_scim_token', 'orgs', 'Rotate the SCIM token; returns it once'),
  O('delete_scim_endpoint', 'orgs', 'Delete the SCIM endpoint'),
  O('scim_endpoint', 'orgs', 'Get SCIM endpoint metadata'),
  // Discovery documents outside /v1 (spec §1)
  route('GET', '/.well-known/jwks.json', 'authn', 'GetJwks', 'JSON Web Key Set (RFC 7517)'),
  route('GET', '/.well-known/openid-configuration', 'authn', 'GetOpenidConfiguration', 'OpenID Provider metadata (OIDC Discovery 1.0)'),
  // The emailed verification link target outside /v1 (behaviour.md §3.4): a 302, mounted by app.ts
  route('GET', '/verify_email', 'authn', 'VerifyEmailLink', 'Email link target: verify, set session cookies, 302 to redirect_uri with tokens or error'),
] satisfies Route[]);

/** The answer of {@link RouteMatcher.match}. */
export type RouteMatch =
  | { route: Route }
  | { error: 'method_not_allowed'; allow: readonly HttpMethod[] }
  | { error: 'not_found' };

export interface RouteMatcher {
  match(method: string, path: string): RouteMatch;
}

/**
 * Indexes `table` by exact path (a Map lookup per request). HEAD matches a GET route.
 * @throws Error when two routes share method and path (a table bug, found at startup)
 */
export function createRouteMatcher(table: readonly Route[]): RouteMatcher {
  const byPath = new Map<string, Map<HttpMethod, Route>>();
  for (const route of table) {
    const methods = byPath.get(route.path) ?? new Map<HttpMethod, Route>();
    if (methods.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.path}`);
    methods.set(route.method, route);
    byPath.set(route.path, methods);
  }
  return {
    match(method, path) {
      const methods = byPath.get(path);
      if (!methods) return { error: 'not_found' };
      const m = method.toUpperCase();
      const route = methods.get((m === 'HEAD' ? 'GET' : m) as HttpMethod);
      return route ? { route } : { error: 'method_not_allowed', allow: [...methods.keys()] };
    },
  };
}

const DEFAULT_MATCHER = createRouteMatcher(ROUTES);

/** {@link RouteMatcher.match} over {@link ROUTES}. */
export function matchRoute(method: string, path: string): RouteMatch {
  return DEFAULT_MATCHER.match(method, path);
}

export { buildOpenApi, notServedOperations } from './openapi.ts';
