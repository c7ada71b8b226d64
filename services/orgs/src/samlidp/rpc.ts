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
import type { OutboxEvent } from '../storage/ports.ts';
import { keyWire, listKeys, retireKey, rotateKey } from './keys.ts';
import {
  createProvider, deleteProvider, existingOrg, getProvider, providerWire, SP_DELETED, updateProvider,
} from './providers.ts';

type Handlers = HandlersOf<orgs.OrgsService>;
export type SamlIdpRpc = 'CreateSamlServiceProvider' | 'UpdateSamlServiceProvider' | 'DeleteSamlServiceProvider' | 'SamlServiceProvider'
  | 'ListSamlServiceProviders' | 'RotateSamlIdpCert' | 'RetireSamlIdpKey' | 'ListSamlIdpKeys' | 'ImportSamlSpMetadata' | 'SamlIdpRequest';

/**
 * The §5.7 `saml.*` audit row of an admin call, as an outbox event the store writes in the transaction of
 * the change (issue 32 §1); the actor is the super-admin or the org admin, resolved before the write.
 */
async function recorder(d: SamlIdpDeps, ctx: CallContext): Promise<(action: string, resourceType: 'saml_service_provider' | 'saml_idp_key', resourceId: string, details: Record<string, unknown>) => OutboxEvent[]> {
  const caller = d.authenticator ? await d.authenticator.resolveCaller(ctx).catch(() => null) : null;
  const actor = caller ? actorOf(caller) : SUPER_ADMIN_ACTOR;
  return (action, resourceType, resourceId, details) => [{ name: 'audit.recorded', data: auditRecord(ctx, action, { actor, resourceType, resourceId, details }) }];
}

/** The ten SAML IdP handlers of the orgs handler map. */
export function samlIdpHandlers(d: SamlIdpDeps): Pick<Handlers, SamlIdpRpc> {
  return {
    CreateSamlServiceProvider: async (req, ctx) => {
      const record = await recorder(d, ctx);
      const sp = await createProvider(d, req, (x) => record('saml.idp_service_provider_changed', 'saml_service_provider', x.id, { org_id: x.orgId, change: 'created', entity_id: x.entityId }));
      return providerWire(sp);
    },
    UpdateSamlServiceProvider: async (req, ctx) => {
      const record = await recorder(d, ctx);
      const sp = await updateProvider(d, req, (x) => record('saml.idp_service_provider_changed', 'saml_service_provider', x.id, { org_id: x.orgId, change: 'updated', entity_id: x.entityId }));
      return providerWire(sp);
    },
    DeleteSamlServiceProvider: async (req, ctx) => {
      const record = await recorder(d, ctx);
      await deleteProvider(d, req.id, (x) => record('saml.idp_service_provider_changed', 'saml_service_provider', x.id, { org_id: x.orgId, change: 'deleted', entity_id: x.entityId }));
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
      const record = await recorder(d, ctx);
      const key = await rotateKey(d, req.org_id, (k) => record('saml.idp_key_rotated', 'saml_idp_key', k.id, { org_id: k.orgId, status: k.status }), req.stage ?? false);
      return keyWire(key);
    },
    RetireSamlIdpKey: async (req, ctx) => {
      const record = await recorder(d, ctx);
      const { message } = await retireKey(d, req.id, (k) => record('saml.idp_key_retired', 'saml_idp_key', k.id, { org_id: k.orgId }));
      return { message };
    },
    ListSamlIdpKeys: async (req) => ({ saml_idp_keys: (await listKeys(d, req.org_id)).map(keyWire) }),
    // the XML stack (@xmldom/xmldom, samlify with node-forge: ≈ 7 MiB of heap) loads with the first
    // request that needs it, not at start-up (issue 22 §3)
    ImportSamlSpMetadata: async (req) => (await import('./metadata-import.ts')).parseSpMetadata(req.metadata_xml),
    SamlIdpRequest: async (req, ctx) => (await import('./sso.ts')).handleIdpRequest(d, ctx, req),
  };
}
