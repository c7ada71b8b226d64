/**
 * @module @gatehouse/orgs/service
 * createOrgsService(deps): the organizations service's handler maps (proto
 * `gatehouse.orgs.v1.OrgsService` and `OrgsInternal`), one entry per RPC from rpc/. Organizations,
 * members and domains (behaviour.md §6.1, §6.2) are served; the SCIM endpoint administration and
 * server are scim/rpc.ts; the SSO connections (behaviour.md §6.3) are sso/rpc.ts; the SAML identity-provider
 * role (§5.9) is samlidp/rpc.ts.
 *
 * The guard's org-admin mode (behaviour.md §5.1) is fed from this service's own membership table: the
 * organization a call addresses comes from its `org_id` (or `id` for an organization, or the verified
 * mapping of `delete_org_domain` without `org_id`), and the check is one indexed lookup.
 */
import { createAuthGuard, type OrgAdminDirectory } from '@gatehouse/auth';
import { defineService, notImplemented, serviceDescriptor, type GuardedCall, type ServiceImplementation } from '@gatehouse/rpc';
import { normaliseDomain } from './domain/domains.ts';
import { isUuid } from './domain/members.ts';
import type { RpcContext } from './rpc/deps.ts';
import { addVerifiedOrgDomainRpc, deleteOrgDomainRpc, orgDomainsRpc, requestOrgDomainRpc, verifyOrgDomainRpc } from './rpc/domains.ts';
import { isOrgAdminRpc, orgOfVerifiedDomainRpc } from './rpc/internal.ts';
import { addOrgMemberRpc, orgMembersRpc, removeOrgMemberRpc, updateOrgMemberRpc, userOrganizationsRpc } from './rpc/members.ts';
import {
  createOrganizationRpc, deleteOrganizationRpc, organizationRpc, organizationsRpc, updateOrganizationRpc,
} from './rpc/organizations.ts';
import type { OrgsStore } from './storage/ports.ts';
import { scimHandlers, type ScimRpcDeps } from './scim/rpc.ts';
import type { SamlIdpDeps } from './samlidp/deps.ts';
import { samlIdpHandlers } from './samlidp/rpc.ts';
import type { SamlIdpStore } from './samlidp/storage/ports.ts';
import { handleSsoRequest, type SsoFlowDeps } from './sso/flows.ts';
import { ssoHandlers } from './sso/rpc.ts';
import type { SsoStore } from './sso/storage/ports.ts';

export type { RpcContext as OrgsDeps } from './rpc/deps.ts';

export interface OrgsService {
  public: ServiceImplementation<'gatehouse.orgs.v1.OrgsService'>;
  internal: ServiceImplementation<'gatehouse.orgs.v1.OrgsInternal'>;
}

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** The SAML IdP RPCs addressed by a record `id` (behaviour.md §5.9): the record's org is the call's. */
const SAML_SP_BY_ID = new Set(['UpdateSamlServiceProvider', 'DeleteSamlServiceProvider', 'SamlServiceProvider']);

/** The org of a SAML IdP record a call addresses by id, or null. */
async function samlRecordOrg(saml: SamlIdpStore | null, call: GuardedCall): Promise<string | null> {
  const id = text(call.request['id'])?.toLowerCase() ?? null;
  if (!saml || id === null || !isUuid(id)) return null;
  if (SAML_SP_BY_ID.has(call.rpc)) return (await saml.providers.get(id))?.orgId ?? null;
  if (call.rpc === 'RetireSamlIdpKey') return (await saml.keys.get(id))?.orgId ?? null;
  return null;
}

/** The SSO connection RPCs that may address their record by `id` (behaviour.md §6.3). */
const OIDC_BY_ID = new Set(['UpdateOrgOidcConnection', 'DeleteOrgOidcConnection', 'OrgOidcConnection']);
const SAML_BY_ID = new Set(['UpdateOrgSamlConnection', 'DeleteOrgSamlConnection', 'OrgSamlConnection', 'RotateOrgSamlSpKey']);

/** The org of the SSO connection a call names by `id`, or null. */
async function orgOfConnection(sso: SsoStore | undefined, call: GuardedCall): Promise<string | null> {
  const id = text(call.request['id'])?.toLowerCase() ?? null;
  if (!sso || id === null || !isUuid(id)) return null;
  if (OIDC_BY_ID.has(call.rpc)) return (await sso.oidc.byId(id))?.orgId ?? null;
  if (SAML_BY_ID.has(call.rpc)) return (await sso.saml.byId(id))?.orgId ?? null;
  return null;
}

/** The org a call addresses (behaviour.md §5.1); null when none that could exist. */
async function orgOf(store: OrgsStore, call: GuardedCall, sso?: SsoStore, saml: SamlIdpStore | null = null): Promise<string | null> {
  const r = call.request;
  let orgId = text(r['org_id']) ?? (call.rpc === 'Organization' || call.rpc === 'UpdateOrganization' ? text(r['id']) : null)
    ?? await orgOfConnection(sso, call);
  orgId ??= await samlRecordOrg(saml, call);
  if (orgId === null && call.rpc === 'DeleteOrgDomain' && text(r['domain'])) {
    // without org_id, delete_org_domain addresses the verified mapping's organization
    try {
      orgId = (await store.domains.verified(normaliseDomain(text(r['domain'])!)))?.orgId ?? null;
    } catch {
      return null;
    }
  }
  return orgId !== null && isUuid(orgId) ? orgId.toLowerCase() : null;
}

/** The org-admin directory of the guard, on this service's store (and the SSO and SAML IdP stores, for records addressed by id). */
export function orgAdminDirectory(store: OrgsStore, sso?: SsoStore, saml: SamlIdpStore | null = null): OrgAdminDirectory {
  return {
    orgOf: (call) => orgOf(store, call, sso, saml),
    isOrgAdmin: (userId, orgId) => store.members.isOrgAdmin(userId, orgId),
  };
}

/**
 * Builds the orgs service's handler maps; without `scim` the SCIM RPCs answer `unimplemented`, without
 * `sso` the SSO connection RPCs do, and without `saml` the SAML IdP RPCs do.
 */
export function createOrgsService(c: RpcContext, scim?: Omit<ScimRpcDeps, 'authenticator'>, sso?: SsoFlowDeps, saml?: SamlIdpDeps): OrgsService {
  return {
    public: defineService(serviceDescriptor('orgs'), {
      // organizations and members (behaviour.md §6.1)
      CreateOrganization: createOrganizationRpc(c),
      UpdateOrganization: updateOrganizationRpc(c),
      DeleteOrganization: deleteOrganizationRpc(c),
      Organization: organizationRpc(c),
      Organizations: organizationsRpc(c),
      AddOrgMember: addOrgMemberRpc(c),
      UpdateOrgMember: updateOrgMemberRpc(c),
      RemoveOrgMember: removeOrgMemberRpc(c),
      OrgMembers: orgMembersRpc(c),
      UserOrganizations: userOrganizationsRpc(c),
      // domains (behaviour.md §6.2)
      RequestOrgDomain: requestOrgDomainRpc(c),
      VerifyOrgDomain: verifyOrgDomainRpc(c),
      AddVerifiedOrgDomain: addVerifiedOrgDomainRpc(c),
      DeleteOrgDomain: deleteOrgDomainRpc(c),
      OrgDomains: orgDomainsRpc(c),
      // SSO connections (behaviour.md §6.3)
      ...(sso ? { ...ssoHandlers(c, sso.sso), SsoRequest: (req, ctx) => handleSsoRequest(sso, req, ctx) } : {
        CreateOrgOidcConnection: notImplemented, UpdateOrgOidcConnection: notImplemented, DeleteOrgOidcConnection: notImplemented,
        OrgOidcConnection: notImplemented, CreateOrgSamlConnection: notImplemented, UpdateOrgSamlConnection: notImplemented,
        DeleteOrgSamlConnection: notImplemented, OrgSamlConnection: notImplemented, RotateOrgSamlSpKey: notImplemented, SsoRequest: notImplemented,
      }),
      // SCIM endpoint and server (behaviour.md §6.4): scim/rpc.ts
      ...(scim ? scimHandlers({ ...scim, authenticator: c.authenticator }) : {
        CreateScimEndpoint: notImplemented, RotateScimToken: notImplemented, DeleteScimEndpoint: notImplemented,
        ScimEndpoint: notImplemented, ScimRequest: notImplemented,
      }),
      // SAML identity-provider role (behaviour.md §5.9): samlidp/rpc.ts
      ...(saml ? samlIdpHandlers(saml) : {
        CreateSamlServiceProvider: notImplemented, UpdateSamlServiceProvider: notImplemented, DeleteSamlServiceProvider: notImplemented,
        SamlServiceProvider: notImplemented, ListSamlServiceProviders: notImplemented, RotateSamlIdpCert: notImplemented,
        RetireSamlIdpKey: notImplemented, ListSamlIdpKeys: notImplemented, ImportSamlSpMetadata: notImplemented, SamlIdpRequest: notImplemented,
      }),
    }, createAuthGuard(c.authenticator, { orgAdmins: orgAdminDirectory(c.store, sso?.sso.store, saml?.store ?? null) })),
    internal: defineService(serviceDescriptor('orgs.internal'), {
      IsOrgAdmin: isOrgAdminRpc(c),
      OrgOfVerifiedDomain: orgOfVerifiedDomainRpc(c),
    }),
  };
}
