/**
 * @module @gatehouse/admin/service
 * createAdminService(deps): the admin plane's handler maps (proto `gatehouse.admin.v1.AdminService`
 * and `AdminInternal`). Webhooks, email templates and the audit log are served (issue 17); the RPCs
 * of later work answer `unimplemented` once the caller passes its auth class, so the admin surface
 * refuses anonymous and plain-user callers with 401 on REST, GraphQL and gRPC.
 */
import { createAuthGuard } from '@gatehouse/auth';
import { defineService, notImplemented, serviceDescriptor, type ServiceImplementation } from '@gatehouse/rpc';
import type { RpcContext } from './rpc/deps.ts';
import { hookHandlers, hookInternalHandlers } from './rpc/hooks-handlers.ts';

export type { RpcContext as AdminDeps } from './rpc/deps.ts';

export interface AdminService {
  public: ServiceImplementation<'gatehouse.admin.v1.AdminService'>;
  internal: ServiceImplementation<'gatehouse.admin.v1.AdminInternal'>;
}

/** Builds the admin service's handler maps. */
export function createAdminService(c: RpcContext): AdminService {
  return {
    public: defineService(serviceDescriptor('admin'), {
      AdminLogin: notImplemented,
      AdminLogout: notImplemented,
      AdminSession: notImplemented,
      AdminMeta: notImplemented,
      ...hookHandlers(c),
      CreateClient: notImplemented,
      UpdateClient: notImplemented,
      DeleteClient: notImplemented,
      RotateClientSecret: notImplemented,
      Client: notImplemented,
      Clients: notImplemented,
      AddTrustedIssuer: notImplemented,
      UpdateTrustedIssuer: notImplemented,
      DeleteTrustedIssuer: notImplemented,
      TrustedIssuer: notImplemented,
      TrustedIssuers: notImplemented,
      CreateSamlServiceProvider: notImplemented,
      UpdateSamlServiceProvider: notImplemented,
      DeleteSamlServiceProvider: notImplemented,
      SamlServiceProvider: notImplemented,
      ListSamlServiceProviders: notImplemented,
      RotateSamlIdpCert: notImplemented,
      RetireSamlIdpKey: notImplemented,
      ListSamlIdpKeys: notImplemented,
      ImportSamlSpMetadata: notImplemented,
    }, createAuthGuard(c.authenticator)),
    internal: defineService(serviceDescriptor('admin.internal'), hookInternalHandlers(c)),
  };
}
