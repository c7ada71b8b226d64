/**
 * @module @gatehouse/authn/rpc/clients
 * AuthnService's client and trusted-issuer RPCs (POST /v1/admin/{create,update,delete}_client,
 * rotate_client_secret, client, clients, and the five trusted-issuer routes; behaviour.md §5.8), each
 * recorded in the audit log as `admin.client_*` / `admin.trusted_issuer_*` (§5.7).
 */
import { SUPER_ADMIN_ACTOR, auditRecord } from '@gatehouse/auth';
import type { admin } from '@gatehouse/contracts';
import type { CallContext } from '@gatehouse/rpc';
import {
  CLIENT_DELETED, ISSUER_DELETED, addTrustedIssuer, createClient, deleteClient, deleteTrustedIssuer, getClient, getTrustedIssuer,
  listClients, listTrustedIssuers, rotateClientSecret, updateClient, updateTrustedIssuer,
} from '../domain/clients.ts';
import { paginationOf } from '@gatehouse/contracts/pagination';
import type { ClientRecord, TrustedIssuerRecord } from '../storage/ports.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/** The wire Client (graphql.md §3.1): never the secret. */
export const wireClient = (r: ClientRecord): admin.Client => ({
  id: r.id, client_id: r.id, name: r.name, description: r.description, allowed_scopes: r.allowedScopes, is_active: r.isActive,
  created_at: r.createdAt, updated_at: r.updatedAt, redirect_uris: r.redirectUris, grant_types: r.grantTypes, is_public: r.isPublic,
  post_logout_redirect_uris: r.postLogoutRedirectUris, is_first_party: r.isFirstParty,
  backchannel_logout_uri: r.backchannelLogoutUri, backchannel_logout_session_required: r.backchannelLogoutSessionRequired,
  frontchannel_logout_uri: r.frontchannelLogoutUri, frontchannel_logout_session_required: r.frontchannelLogoutSessionRequired,
  require_pushed_authorization_requests: r.requirePushedAuthorizationRequests,
});

const wireIssuer = (t: TrustedIssuerRecord): admin.TrustedIssuer => ({
  id: t.id, service_account_id: t.serviceAccountId, name: t.name, issuer_url: t.issuerUrl, key_source_type: t.keySourceType,
  jwks_url: t.jwksUrl, expected_aud: t.expectedAud, subject_claim: t.subjectClaim, allowed_subjects: t.allowedSubjects,
  issuer_type: t.issuerType, is_active: t.isActive, spiffe_refresh_hint_seconds: t.spiffeRefreshHintSeconds,
  enable_token_review: t.enableTokenReview, kubernetes_api_server_url: t.kubernetesApiServerUrl, created_at: t.createdAt, updated_at: t.updatedAt,
});

/** Records one super-admin action on a client or issuer (behaviour.md §5.7). Best effort: never throws. */
async function recordAdmin(c: RpcContext, ctx: CallContext, action: string, resourceType: string, resourceId: string, details: Record<string, unknown> = {}): Promise<void> {
  try {
    const record = auditRecord(ctx, action, { actor: SUPER_ADMIN_ACTOR, resourceType, resourceId, details, at: c.now() });
    await c.users.transaction(async (tx) => { tx.events.emit('audit.recorded', record); });
  } catch (err) {
    c.logger.warn({ err, action }, 'audit event not recorded');
  }
}

const clientInput = (req: {
  name?: string | null; description?: string | null; allowed_scopes: string[]; redirect_uris: string[]; grant_types: string[]; post_logout_redirect_uris: string[];
  is_first_party?: boolean | null; backchannel_logout_uri?: string | null; backchannel_logout_session_required?: boolean | null;
  frontchannel_logout_uri?: string | null; frontchannel_logout_session_required?: boolean | null;
  require_pushed_authorization_requests?: boolean | null;
}) => ({
  name: req.name, description: req.description, allowedScopes: req.allowed_scopes, redirectUris: req.redirect_uris,
  grantTypes: req.grant_types, postLogoutRedirectUris: req.post_logout_redirect_uris, isFirstParty: req.is_first_party,
  backchannelLogoutUri: req.backchannel_logout_uri, backchannelLogoutSessionRequired: req.backchannel_logout_session_required,
  frontchannelLogoutUri: req.frontchannel_logout_uri, frontchannelLogoutSessionRequired: req.frontchannel_logout_session_required,
  requirePushedAuthorizationRequests: req.require_pushed_authorization_requests,
});

/** `create_client` → `{client, client_secret}` (the secret once). @throws AppError `invalid_argument` */
export const createClientRpc = (c: RpcContext): AuthnHandler<'CreateClient'> => async (req, ctx) => {
  const { client, secret } = await createClient(c, { ...clientInput(req), isPublic: req.is_public });
  await recordAdmin(c, ctx, 'admin.client_created', 'service_account', client.id, { name: client.name });
  return { client: wireClient(client), client_secret: secret };
};

/** `update_client` → Client. @throws AppError `invalid_argument`, `not_found`, `failed_precondition` (own client) */
export const updateClientRpc = (c: RpcContext): AuthnHandler<'UpdateClient'> => async (req, ctx) => {
  const { client, changed } = await updateClient(c, req.id, { ...clientInput(req), isActive: req.is_active, clearPostLogoutRedirectUris: req.clear_post_logout_redirect_uris });
  await recordAdmin(c, ctx, 'admin.client_updated', 'service_account', client.id, { fields: changed });
  return wireClient(client);
};

/** `rotate_client_secret` → `{client, client_secret}`. */
export const rotateClientSecretRpc = (c: RpcContext): AuthnHandler<'RotateClientSecret'> => async (req, ctx) => {
  const { client, secret } = await rotateClientSecret(c, req.id);
  await recordAdmin(c, ctx, 'admin.client_secret_rotated', 'service_account', client.id);
  return { client: wireClient(client), client_secret: secret };
};

/** `delete_client` → `Service account deleted successfully`. */
export const deleteClientRpc = (c: RpcContext): AuthnHandler<'DeleteClient'> => async (req, ctx) => {
  const client = await deleteClient(c, req.id);
  await recordAdmin(c, ctx, 'admin.client_deleted', 'service_account', client.id);
  return { message: CLIENT_DELETED };
};

/** `client` → Client. */
export const clientRpc = (c: RpcContext): AuthnHandler<'Client'> => async (req) => wireClient(await getClient(c, req.id));

/** `clients` → `{clients, pagination}`, the server's own client included. */
export const clientsRpc = (c: RpcContext): AuthnHandler<'Clients'> => async (req) => {
  const { page, result } = await listClients(c, req.pagination);
  return { clients: result.rows.map(wireClient), pagination: paginationOf(page, result.total) };
};

/** `add_trusted_issuer` → TrustedIssuer. */
export const addTrustedIssuerRpc = (c: RpcContext): AuthnHandler<'AddTrustedIssuer'> => async (req, ctx) => {
  const t = await addTrustedIssuer(c, {
    serviceAccountId: req.service_account_id, name: req.name, issuerUrl: req.issuer_url, keySourceType: req.key_source_type,
    jwksUrl: req.jwks_url, expectedAud: req.expected_aud, subjectClaim: req.subject_claim, allowedSubjects: req.allowed_subjects,
    issuerType: req.issuer_type, spiffeRefreshHintSeconds: req.spiffe_refresh_hint_seconds, enableTokenReview: req.enable_token_review,
    kubernetesApiServerUrl: req.kubernetes_api_server_url,
  });
  await recordAdmin(c, ctx, 'admin.trusted_issuer_created', 'trusted_issuer', t.id, { issuer_url: t.issuerUrl, service_account_id: t.serviceAccountId });
  return wireIssuer(t);
};

/** `update_trusted_issuer` → TrustedIssuer. */
export const updateTrustedIssuerRpc = (c: RpcContext): AuthnHandler<'UpdateTrustedIssuer'> => async (req, ctx) => {
  const { issuer, changed } = await updateTrustedIssuer(c, req.id, {
    name: req.name, jwksUrl: req.jwks_url, expectedAud: req.expected_aud, allowedSubjects: req.allowed_subjects, isActive: req.is_active,
    spiffeRefreshHintSeconds: req.spiffe_refresh_hint_seconds, enableTokenReview: req.enable_token_review, kubernetesApiServerUrl: req.kubernetes_api_server_url,
  });
  await recordAdmin(c, ctx, 'admin.trusted_issuer_updated', 'trusted_issuer', issuer.id, { fields: changed });
  return wireIssuer(issuer);
};

/** `delete_trusted_issuer` → `Trusted issuer deleted successfully`. */
export const deleteTrustedIssuerRpc = (c: RpcContext): AuthnHandler<'DeleteTrustedIssuer'> => async (req, ctx) => {
  const t = await deleteTrustedIssuer(c, req.id);
  await recordAdmin(c, ctx, 'admin.trusted_issuer_deleted', 'trusted_issuer', t.id);
  return { message: ISSUER_DELETED };
};

/** `trusted_issuer` → TrustedIssuer. */
export const trustedIssuerRpc = (c: RpcContext): AuthnHandler<'TrustedIssuer'> => async (req) => wireIssuer(await getTrustedIssuer(c, req.id));

/** `trusted_issuers` → `{trusted_issuers, pagination}`. */
export const trustedIssuersRpc = (c: RpcContext): AuthnHandler<'TrustedIssuers'> => async (req) => {
  const { page, result } = await listTrustedIssuers(c, req.service_account_id, req.pagination);
  return { trusted_issuers: result.rows.map(wireIssuer), pagination: paginationOf(page, result.total) };
};
