/**
 * @module @gatehouse/orgs/service
 * createOrgsService(deps): the organizations service's handler map (proto `gatehouse.orgs.v1.OrgsService`).
 * No RPC is served yet (the organizations issue builds them): each answers `unimplemented` once the
 * caller passes its auth class, so the org-scoped admin surface already refuses anonymous and plain-user callers
 * with 401 on REST, GraphQL and gRPC.
 */
import { createAuthGuard, type Authenticator } from '@gatehouse/auth';
import { serviceDescriptor, unimplementedService, type ServiceImplementation } from '@gatehouse/rpc';

export interface OrgsDeps {
  /** the deployment's credential resolution (null: every orgs RPC answers 401) */
  authenticator: Authenticator | null;
}

export function createOrgsService(deps: OrgsDeps): ServiceImplementation<'gatehouse.orgs.v1.OrgsService'> {
  return unimplementedService(serviceDescriptor('orgs'), createAuthGuard(deps.authenticator));
}
