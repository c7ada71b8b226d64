/**
 * @module orgs/sso/rpc
 * The nine SSO connection RPCs of OrgsService (behaviour.md §6.3; auth class `org_admin`, checked by
 * the guard before the handler): wire message → sso/connections.ts → wire record, with the §5.7 audit
 * rows `admin.org_oidc_connection_created|updated|deleted`, `admin.org_saml_connection_*` and their
 * `_failed` twins; `RotateOrgSamlSpKey` (issue 31: the SP key pair rotated in place, sp-keys.ts) with
 * `admin.org_saml_sp_key_<step>d` (`staged`, `activated`, `retired`). The client secret, the IdP
 * certificate and the SP private keys never leave the service.
 */
import { auditRecord } from '@gatehouse/auth';
import type { orgs } from '@gatehouse/contracts';
import type { CallContext } from '@gatehouse/rpc';
import { audited, callerOf, type OrgsHandler, type RpcContext } from '../rpc/deps.ts';
import {
  createOidcConnection, createSamlConnection, deleteOidcConnection, deleteSamlConnection, effectiveOidc, effectiveSaml, getOidcConnection,
  getSamlConnection, OIDC_DELETED, SAML_DELETED, updateOidcConnection, updateSamlConnection,
} from './connections.ts';
import type { SsoDeps } from './deps.ts';
import { rotateSpKey } from './sp-keys.ts';
import type { OidcConnectionRecord, SamlConnectionRecord } from './storage/ports.ts';
import type { EventsOf } from '../storage/ports.ts';

type SsoRpc =
  | 'CreateOrgOidcConnection' | 'UpdateOrgOidcConnection' | 'DeleteOrgOidcConnection' | 'OrgOidcConnection'
  | 'CreateOrgSamlConnection' | 'UpdateOrgSamlConnection' | 'DeleteOrgSamlConnection' | 'OrgSamlConnection' | 'RotateOrgSamlSpKey';

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

/**
 * Runs one admin write with its audit row: `write` hands `events` to the store, which writes the row in the
 * transaction of the change (issue 32 §1); a refusal's `_failed` row is written by {@link audited}.
 */
async function withAudit<R extends { id: string; orgId: string }>(
  c: RpcContext, ctx: CallContext, action: string, resourceType: 'org_oidc_connection' | 'org_saml_connection', resourceId: string | null,
  context: Record<string, unknown>, write: (events: EventsOf<R>) => Promise<R>, details: (r: R) => Record<string, unknown> = () => ({}),
): Promise<R> {
  const caller = await callerOf(c, ctx);
  const of = (r: R) => ({ resourceId: r.id, details: { org_id: r.orgId, ...details(r) } });
  return audited(c, ctx, caller, { action, resourceType, resourceId, context, of }, () => write((r) => {
    const o = of(r);
    return [{ name: 'audit.recorded', data: auditRecord(ctx, `admin.${action}`, { actor: caller.actor, resourceType, resourceId: o.resourceId, details: { ...context, ...o.details } }) }];
  }));
}

/** The wire OrgSAMLSpKeys: the certificates only. */
const spKeysWire = (c: SamlConnectionRecord): orgs.OrgSAMLSpKeys => ({
  connection_id: c.id, certificate: c.spCertificate ?? '', next_certificate: c.spNextCertificate ?? undefined, previous_certificate: c.spPreviousCertificate ?? undefined,
});

const STEP_ACTION: Record<string, string> = { stage: 'org_saml_sp_key_staged', activate: 'org_saml_sp_key_activated', retire: 'org_saml_sp_key_retired' };

/** The nine handlers of the orgs handler map. */
export function ssoHandlers(c: RpcContext, d: SsoDeps): Pick<{ [K in SsoRpc]: OrgsHandler<K> }, SsoRpc> {
  return {
    CreateOrgOidcConnection: async (req, ctx) => oidcWire(d, await withAudit(c, ctx, 'org_oidc_connection_created', 'org_oidc_connection', null, { org_id: req.org_id },
      (events) => createOidcConnection(d, {
        orgId: req.org_id, name: req.name, issuerUrl: req.issuer_url, clientId: req.client_id, clientSecret: req.client_secret, scopes: req.scopes, redirectUri: req.redirect_uri,
      }, events), (r) => ({ issuer_url: r.issuerUrl }))),
    UpdateOrgOidcConnection: async (req, ctx) => {
      const changed = Object.entries(req).filter(([k, v]) => k !== 'id' && v !== undefined && v !== null).map(([k]) => k);
      return oidcWire(d, await withAudit(c, ctx, 'org_oidc_connection_updated', 'org_oidc_connection', req.id, { changed_fields: changed },
        (events) => updateOidcConnection(d, {
          id: req.id, name: req.name, issuerUrl: req.issuer_url, clientId: req.client_id, clientSecret: req.client_secret, scopes: req.scopes,
          redirectUri: req.redirect_uri, isActive: req.is_active,
        }, events)));
    },
    DeleteOrgOidcConnection: async (req, ctx) => {
      await withAudit(c, ctx, 'org_oidc_connection_deleted', 'org_oidc_connection', req.id ?? null, { org_id: req.org_id ?? null },
        (events) => deleteOidcConnection(d, { id: req.id, orgId: req.org_id }, events));
      return { message: OIDC_DELETED };
    },
    OrgOidcConnection: async (req) => oidcWire(d, await getOidcConnection(d, { id: req.id, orgId: req.org_id })),
    CreateOrgSamlConnection: async (req, ctx) => samlWire(d, await withAudit(c, ctx, 'org_saml_connection_created', 'org_saml_connection', null, { org_id: req.org_id },
      (events) => createSamlConnection(d, {
        orgId: req.org_id, name: req.name, idpEntityId: req.idp_entity_id, idpSsoUrl: req.idp_sso_url, idpCertificate: req.idp_certificate,
        spEntityId: req.sp_entity_id, acsUrl: req.acs_url, attributeMapping: req.attribute_mapping, allowIdpInitiated: req.allow_idp_initiated,
        idpSsoBinding: req.idp_sso_binding, idpSloUrl: req.idp_slo_url,
      }, events), (r) => ({ idp_entity_id: r.idpEntityId }))),
    UpdateOrgSamlConnection: async (req, ctx) => {
      const changed = Object.entries(req).filter(([k, v]) => k !== 'id' && v !== undefined && v !== null).map(([k]) => k);
      return samlWire(d, await withAudit(c, ctx, 'org_saml_connection_updated', 'org_saml_connection', req.id, { changed_fields: changed },
        (events) => updateSamlConnection(d, {
          id: req.id, name: req.name, idpEntityId: req.idp_entity_id, idpSsoUrl: req.idp_sso_url, idpCertificate: req.idp_certificate,
          spEntityId: req.sp_entity_id, acsUrl: req.acs_url, attributeMapping: req.attribute_mapping, allowIdpInitiated: req.allow_idp_initiated, isActive: req.is_active,
          idpSsoBinding: req.idp_sso_binding, idpSloUrl: req.idp_slo_url,
        }, events)));
    },
    DeleteOrgSamlConnection: async (req, ctx) => {
      await withAudit(c, ctx, 'org_saml_connection_deleted', 'org_saml_connection', req.id ?? null, { org_id: req.org_id ?? null },
        (events) => deleteSamlConnection(d, { id: req.id, orgId: req.org_id }, events));
      return { message: SAML_DELETED };
    },
    OrgSamlConnection: async (req) => samlWire(d, await getSamlConnection(d, { id: req.id, orgId: req.org_id })),
    RotateOrgSamlSpKey: async (req, ctx) => {
      const step = (req.step ?? '').trim().toLowerCase();
      const action = STEP_ACTION[step] ?? 'org_saml_sp_key_rotated';
      const rotated = await withAudit<SamlConnectionRecord>(c, ctx, action, 'org_saml_connection', req.id ?? null, { org_id: req.org_id ?? null, step },
        async (events) => {
          const conn = await getSamlConnection(d, { id: req.id, orgId: req.org_id });
          await rotateSpKey(d, conn, step, events(conn));
          return (await d.store.saml.byId(conn.id)) ?? conn;
        });
      return spKeysWire(rotated);
    },
  };
}
