/**
 * @module @gatehouse/admin/service
 * createAdminService(deps): the admin plane's handler map (proto `gatehouse.admin.v1.AdminService`),
 * one entry per RPC from rpc/<method>.ts. RPCs of later releases answer `unimplemented` once the
 * caller passes its auth class, so the admin surface refuses anonymous and plain-user callers with
 * 401 on REST, GraphQL and gRPC.
 */
import { createAuthGuard } from '@gatehouse/auth';
import { defineService, notImplemented, serviceDescriptor, type ServiceImplementation } from '@gatehouse/rpc';
import { adminLoginRpc } from './rpc/admin-login.ts';
import { adminLogoutRpc } from './rpc/admin-logout.ts';
import { adminMetaRpc } from './rpc/admin-meta.ts';
import { adminSessionRpc } from './rpc/admin-session.ts';
import type { AdminRpcDeps } from './rpc/deps.ts';

export type { AdminRpcDeps as AdminDeps } from './rpc/deps.ts';

export function createAdminService(deps: AdminRpcDeps): ServiceImplementation<'gatehouse.admin.v1.AdminService'> {
  return defineService(serviceDescriptor('admin'), {
    // admin session and meta (behaviour.md §5.1, §5.2)
    AdminLogin: adminLoginRpc(deps),
    AdminLogout: adminLogoutRpc(deps),
    AdminSession: adminSessionRpc(deps),
    AdminMeta: adminMetaRpc(deps),
    // webhooks (behaviour.md §5.4)
    AddWebhook: notImplemented,
    UpdateWebhook: notImplemented,
    DeleteWebhook: notImplemented,
    Webhook: notImplemented,
    Webhooks: notImplemented,
    WebhookLogs: notImplemented,
    TestEndpoint: notImplemented,
    // email templates (behaviour.md §5.5)
    AddEmailTemplate: notImplemented,
    UpdateEmailTemplate: notImplemented,
    DeleteEmailTemplate: notImplemented,
    EmailTemplates: notImplemented,
    // audit log (behaviour.md §5.7)
    AuditLogs: notImplemented,
    // clients and trusted issuers (behaviour.md §5.8)
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
    // SAML identity-provider role (behaviour.md §5.9)
    CreateSamlServiceProvider: notImplemented,
    UpdateSamlServiceProvider: notImplemented,
    DeleteSamlServiceProvider: notImplemented,
    SamlServiceProvider: notImplemented,
    ListSamlServiceProviders: notImplemented,
    RotateSamlIdpCert: notImplemented,
    RetireSamlIdpKey: notImplemented,
    ListSamlIdpKeys: notImplemented,
    ImportSamlSpMetadata: notImplemented,
  }, createAuthGuard(deps.authenticator));
}
