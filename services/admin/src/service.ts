/**
 * @module @gatehouse/admin/service
 * createAdminService(session, hooks): the admin plane's handler maps (proto
 * `gatehouse.admin.v1.AdminService` and `AdminInternal`), one entry per RPC from rpc/<method>.ts. The
 * admin session and AdminMeta (behaviour.md §5.1, §5.2), webhooks, email templates and the audit log
 * (§5.4–§5.7) are served; the RPCs of later work answer `unimplemented` once the caller passes its auth
 * class, so the admin surface refuses anonymous and plain-user callers with 401 on REST, GraphQL and gRPC.
 */
import { createAuthGuard } from '@gatehouse/auth';
import { defineService, serviceDescriptor, type ServiceImplementation } from '@gatehouse/rpc';
import { adminLoginRpc } from './rpc/admin-login.ts';
import { adminLogoutRpc } from './rpc/admin-logout.ts';
import { adminMetaRpc } from './rpc/admin-meta.ts';
import { adminSessionRpc } from './rpc/admin-session.ts';
import { devOutboxRpc } from './rpc/dev-outbox.ts';
import { eventNamesRpc } from './rpc/event-names.ts';
import type { AdminRpcDeps, RpcContext } from './rpc/deps.ts';
import { hookHandlers, hookInternalHandlers } from './rpc/hooks-handlers.ts';

export type { AdminRpcDeps as AdminDeps, RpcContext as AdminHooksDeps } from './rpc/deps.ts';

export interface AdminService {
  public: ServiceImplementation<'gatehouse.admin.v1.AdminService'>;
  internal: ServiceImplementation<'gatehouse.admin.v1.AdminInternal'>;
}

/**
 * Builds the admin service's handler maps.
 * @param session the admin session and AdminMeta dependencies
 * @param hooks the webhook, email template and audit log dependencies (admin's database)
 */
export function createAdminService(session: AdminRpcDeps, hooks: RpcContext): AdminService {
  return {
    public: defineService(serviceDescriptor('admin'), {
      // admin session and meta (behaviour.md §5.1, §5.2)
      AdminLogin: adminLoginRpc(session),
      AdminLogout: adminLogoutRpc(session),
      AdminSession: adminSessionRpc(session),
      AdminMeta: adminMetaRpc(session),
      // the development outbox (issue 33 §4, extension)
      DevOutbox: devOutboxRpc(session),
      // the event names webhooks and email templates accept (issue 35 §3, extension)
      EventNames: eventNamesRpc(),
      // webhooks, email templates, audit log (behaviour.md §5.4, §5.5, §5.7)
      ...hookHandlers(hooks),
      // clients and trusted issuers (behaviour.md §5.8) are authn's since issue 18 (ARCHITECTURE §2)
      // the SAML identity-provider role (behaviour.md §5.9) is orgs' since issue 20 (ARCHITECTURE §2)
    }, createAuthGuard(session.authenticator)),
    internal: defineService(serviceDescriptor('admin.internal'), hookInternalHandlers(hooks)),
  };
}
