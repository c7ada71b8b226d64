/**
 * @module @gatehouse/admin/service
 * createAdminService(deps): the admin plane's handler map (proto `gatehouse.admin.v1.AdminService`).
 * No RPC is served yet (the admin-plane issue builds them): each answers `unimplemented` once the
 * caller passes its auth class, so the admin surface already refuses anonymous and plain-user callers
 * with 401 on REST, GraphQL and gRPC.
 */
import { createAuthGuard, type Authenticator } from '@gatehouse/auth';
import { serviceDescriptor, unimplementedService, type ServiceImplementation } from '@gatehouse/rpc';

export interface AdminDeps {
  /** the deployment's credential resolution (null: every admin RPC answers 401) */
  authenticator: Authenticator | null;
}

export function createAdminService(deps: AdminDeps): ServiceImplementation<'gatehouse.admin.v1.AdminService'> {
  return unimplementedService(serviceDescriptor('admin'), createAuthGuard(deps.authenticator));
}
