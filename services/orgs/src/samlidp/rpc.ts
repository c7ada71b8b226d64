/**
 * @module orgs/samlidp/rpc
 * The SAML identity-provider RPCs of OrgsService (behaviour.md §5.9), moved from AdminService in
 * issue 20: service-provider CRUD, the IdP keys and the metadata import (auth class `org_admin`, the
 * import `admin`; the guard ran before the handler), with their §5.7 audit actions
 * (`saml.idp_service_provider_changed`, `saml.idp_key_rotated`, `saml.idp_key_retired`), and
 * `SamlIdpRequest`, the browser endpoints behind the gateway's `/oauth/saml/<org>/idp/*` (public: the
 * session cookie is the credential, checked in ./sso.ts).
 */
import { actorOf, auditRecord, SUPER_ADMIN_ACTOR } from '@gatehouse/auth';
import type { orgs } from '@gatehouse/contracts';
import { pageWindow, paginationOf } from '@gatehouse/contracts/pagination';
import type { CallContext, HandlersOf } from '@gatehouse/rpc';
import type { SamlIdpDeps } from './deps.ts';
import { keyWire, listKeys, retireKey, rotateKey } from './keys.ts';
import {
  createProvider, deleteProvider, existingOrg, getProvider, providerWire, SP_DELETED, updateProvider,
} from './providers.ts';

type Handlers = HandlersOf<orgs.OrgsService>;
export type SamlIdpRpc = 'CreateSamlServiceProvider' | 'UpdateSamlServiceProvider' | 'DeleteSamlServiceProvider' | 'SamlServiceProvider'
  | 'ListSamlServiceProviders' | 'RotateSamlIdpCert' | 'RetireSamlIdpKey' | 'ListSamlIdpKeys' | 'ImportSamlSpMetadata' | 'SamlIdpRequest';

/** Records a §5.7 `saml.*` action of an admin call; the actor is the super-admin or the org admin. */
async function record(d: SamlIdpDeps, ctx: CallContext, action: string, resourceType: 'saml_service_provider' | 'saml_idp_key', resourceId: string, details: Record<string, unknown>): Promise<void> {
  const caller = d.authenticator ? await d.authenticator.resolveCaller(ctx).catch(() => null) : null;
  const actor = caller ? actorOf(caller) : SUPER_ADMIN_ACTOR;
  d.audit(auditRecord(ctx, action, { actor, resourceType, resourceId, details }));
}

/** The ten SAML IdP handlers of the orgs handler map. */
export function samlIdpHandlers(d: SamlIdpDeps): Pick<Handlers, SamlIdpRpc> {
  return {
    CreateSamlServiceProvider: async (req, ctx) => {
      const sp = await createProvider(d, req);
      await record(d, ctx, 'saml.idp_service_provider_changed', 'saml_service_provider', sp.id, { org_id: sp.orgId, change: 'created', entity_id: sp.entityId });
      return providerWire(sp);
    },
    UpdateSamlServiceProvider: async (req, ctx) => {
      const sp = await updateProvider(d, req);
      await record(d, ctx, 'saml.idp_service_provider_changed', 'saml_service_provider', sp.id, { org_id: sp.orgId, change: 'updated', entity_id: sp.entityId });
      return providerWire(sp);
    },
    DeleteSamlServiceProvider: async (req, ctx) => {
      const sp = await deleteProvider(d, req.id);
      await record(d, ctx, 'saml.idp_service_provider_changed', 'saml_service_provider', sp.id, { org_id: sp.orgId, change: 'deleted', entity_id: sp.entityId });
      return { message: SP_DELETED };
    },
    SamlServiceProvider: async (req) => providerWire(await getProvider(d, req.id)),
    ListSamlServiceProviders: async (req) => {
      const orgId = await existingOrg(d, req.org_id);
      const w = pageWindow(req.pagination);
      const page = await d.store.providers.list(orgId, w);
      return { saml_service_providers: page.rows.map(providerWire), pagination: paginationOf(w, page.total) };
    },
    RotateSamlIdpCert: async (req, ctx) => {
      const key = await rotateKey(d, req.org_id);
      await record(d, ctx, 'saml.idp_key_rotated', 'saml_idp_key', key.id, { org_id: key.orgId });
      return keyWire(key);
    },
    RetireSamlIdpKey: async (req, ctx) => {
      const { message, key } = await retireKey(d, req.id);
      if (key.status === 'active') await record(d, ctx, 'saml.idp_key_retired', 'saml_idp_key', key.id, { org_id: key.orgId });
      return { message };
    },
    ListSamlIdpKeys: async (req) => ({ saml_idp_keys: (await listKeys(d, req.org_id)).map(keyWire) }),
    // the XML stack (@xmldom/xmldom, samlify with node-forge: ≈ 7 MiB of heap) loads with the first
    // request that needs it, not at start-up (issue 22 §3)
    ImportSamlSpMetadata: async (req) => (await import('./metadata-import.ts')).parseSpMetadata(req.metadata_xml),
    SamlIdpRequest: async (req, ctx) => (await import('./sso.ts')).handleIdpRequest(d, ctx, req),
  };
}
