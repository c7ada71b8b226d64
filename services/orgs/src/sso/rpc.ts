/**
 * @module orgs/sso/rpc
 * The eight SSO connection RPCs of OrgsService (behaviour.md §6.3; auth class `org_admin`, checked by
 * the guard before the handler): wire message → sso/connections.ts → wire record, with the §5.7 audit
 * rows `admin.org_oidc_connection_created|updated|deleted`, `admin.org_saml_connection_*` and their
 * `_failed` twins. The client secret and the IdP certificate never leave the service.
 */
import type { orgs } from '@gatehouse/contracts';
import type { CallContext } from '@gatehouse/rpc';
import { audited, callerOf, type OrgsHandler, type RpcContext } from '../rpc/deps.ts';
import {
  createOidcConnection, createSamlConnection, deleteOidcConnection, deleteSamlConnection, effectiveOidc, effectiveSaml, getOidcConnection,
  getSamlConnection, OIDC_DELETED, SAML_DELETED, updateOidcConnection, updateSamlConnection,
} from './connections.ts';
import type { SsoDeps } from './deps.ts';
import type { OidcConnectionRecord, SamlConnectionRecord } from './storage/ports.ts';

type SsoRpc =
  | 'CreateOrgOidcConnection' | 'UpdateOrgOidcConnection' | 'DeleteOrgOidcConnection' | 'OrgOidcConnection'
  | 'CreateOrgSamlConnection' | 'UpdateOrgSamlConnection' | 'DeleteOrgSamlConnection' | 'OrgSamlConnection';

/** The org's name, for the defaults that contain it (an org deleted meanwhile: its id). */
async function orgNameOf(d: SsoDeps, orgId: string): Promise<string> {
  return (await d.orgs.organizations.get(orgId))?.name ?? orgId;
}

/** The wire OrgOIDCConnection: never the secret. */
export async function oidcWire(d: SsoDeps, c: OidcConnectionRecord): Promise<orgs.OrgOIDCConnection> {
  const eff = effectiveOidc(d, c, await orgNameOf(d, c.orgId));
  return {
    id: c.id, org_id: c.orgId, name: c.name, issuer_url: c.issuerUrl, sso_client_id: c.clientId, scopes: eff.scopes, redirect_uri: eff.redirectUri,
    is_active: c.isActive, created_at: c.createdAt, updated_at: c.updatedAt,
  };
}

/** The wire OrgSAMLConnection: never the certificate. */
export async function samlWire(d: SsoDeps, c: SamlConnectionRecord): Promise<orgs.OrgSAMLConnection> {
  const eff = effectiveSaml(d, c, await orgNameOf(d, c.orgId));
  return {
    id: c.id, org_id: c.orgId, name: c.name, idp_entity_id: c.idpEntityId, idp_sso_url: c.idpSsoUrl, sp_entity_id: eff.spEntityId, acs_url: eff.acsUrl,
    attribute_mapping: c.attributeMapping ?? undefined, allow_idp_initiated: c.allowIdpInitiated, is_active: c.isActive, created_at: c.createdAt, updated_at: c.updatedAt,
    idp_sso_binding: c.idpSsoBinding ?? 'HTTP-Redirect', idp_slo_url: c.idpSloUrl ?? undefined,
  };
}

/** Runs one admin write with its audit row (committed through the orgs outbox right after the write). */
async function withAudit<R extends { id: string; orgId: string }>(
  c: RpcContext, ctx: CallContext, action: string, resourceType: 'org_oidc_connection' | 'org_saml_connection', resourceId: string | null,
  context: Record<string, unknown>, write: () => Promise<R>, details: (r: R) => Record<string, unknown> = () => ({}),
): Promise<R> {
  const caller = await callerOf(c, ctx);
  return audited(c, ctx, caller, {
    action, resourceType, resourceId, context, of: (r: R) => ({ resourceId: r.id, details: { org_id: r.orgId, ...details(r) } }),
  }, async (withEvents) => {
    const r = await write();
    await c.store.transaction(async (tx) => { withEvents(tx, r); });
    return r;
  });
}

/** The eight handlers of the orgs handler map. */
export function ssoHandlers(c: RpcContext, d: SsoDeps): Pick<{ [K in SsoRpc]: OrgsHandler<K> }, SsoRpc> {
  return {
    CreateOrgOidcConnection: async (req, ctx) => oidcWire(d, await withAudit(c, ctx, 'org_oidc_connection_created', 'org_oidc_connection', null, { org_id: req.org_id },
      () => createOidcConnection(d, {
        orgId: req.org_id, name: req.name, issuerUrl: req.issuer_url, clientId: req.client_id, clientSecret: req.client_secret, scopes: req.scopes, redirectUri: req.redirect_uri,
      }), (r) => ({ issuer_url: r.issuerUrl }))),
    UpdateOrgOidcConnection: async (req, ctx) => {
      const changed = Object.entries(req).filter(([k, v]) => k !== 'id' && v !== undefined && v !== null).map(([k]) => k);
      return oidcWire(d, await withAudit(c, ctx, 'org_oidc_connection_updated', 'org_oidc_connection', req.id, { changed_fields: changed },
        () => updateOidcConnection(d, {
          id: req.id, name: req.name, issuerUrl: req.issuer_url, clientId: req.client_id, clientSecret: req.client_secret, scopes: req.scopes,
          redirectUri: req.redirect_uri, isActive: req.is_active,
        })));
    },
    DeleteOrgOidcConnection: async (req, ctx) => {
      await withAudit(c, ctx, 'org_oidc_connection_deleted', 'org_oidc_connection', req.id ?? null, { org_id: req.org_id ?? null },
        () => deleteOidcConnection(d, { id: req.id, orgId: req.org_id }));
      return { message: OIDC_DELETED };
    },
    OrgOidcConnection: async (req) => oidcWire(d, await getOidcConnection(d, { id: req.id, orgId: req.org_id })),
    CreateOrgSamlConnection: async (req, ctx) => samlWire(d, await withAudit(c, ctx, 'org_saml_connection_created', 'org_saml_connection', null, { org_id: req.org_id },
      () => createSamlConnection(d, {
        orgId: req.org_id, name: req.name, idpEntityId: req.idp_entity_id, idpSsoUrl: req.idp_sso_url, idpCertificate: req.idp_certificate,
        spEntityId: req.sp_entity_id, acsUrl: req.acs_url, attributeMapping: req.attribute_mapping, allowIdpInitiated: req.allow_idp_initiated,
        idpSsoBinding: req.idp_sso_binding, idpSloUrl: req.idp_slo_url,
      }), (r) => ({ idp_entity_id: r.idpEntityId }))),
    UpdateOrgSamlConnection: async (req, ctx) => {
      const changed = Object.entries(req).filter(([k, v]) => k !== 'id' && v !== undefined && v !== null).map(([k]) => k);
      return samlWire(d, await withAudit(c, ctx, 'org_saml_connection_updated', 'org_saml_connection', req.id, { changed_fields: changed },
        () => updateSamlConnection(d, {
          id: req.id, name: req.name, idpEntityId: req.idp_entity_id, idpSsoUrl: req.idp_sso_url, idpCertificate: req.idp_certificate,
          spEntityId: req.sp_entity_id, acsUrl: req.acs_url, attributeMapping: req.attribute_mapping, allowIdpInitiated: req.allow_idp_initiated, isActive: req.is_active,
          idpSsoBinding: req.idp_sso_binding, idpSloUrl: req.idp_slo_url,
        })));
    },
    DeleteOrgSamlConnection: async (req, ctx) => {
      await withAudit(c, ctx, 'org_saml_connection_deleted', 'org_saml_connection', req.id ?? null, { org_id: req.org_id ?? null },
        () => deleteSamlConnection(d, { id: req.id, orgId: req.org_id }));
      return { message: SAML_DELETED };
    },
    OrgSamlConnection: async (req) => samlWire(d, await getSamlConnection(d, { id: req.id, orgId: req.org_id })),
  };
}
