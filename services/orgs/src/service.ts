/**
 * @module @gatehouse/orgs/service
 * createOrgsService(deps): the organizations service's handler map (proto `gatehouse.orgs.v1.OrgsService`).
 * The SCIM RPCs are served (scim/rpc.ts); the others answer `unimplemented` once the caller passes
 * its auth class, so the org-scoped admin surface already refuses anonymous and plain-user callers
 * with 401 on REST, GraphQL and gRPC.
 */
import { createAuthGuard, type Authenticator } from '@gatehouse/auth';
import { defineService, notImplemented, serviceDescriptor, type HandlersOf, type ServiceImplementation } from '@gatehouse/rpc';
import type { orgs } from '@gatehouse/contracts';
import { scimHandlers, type ScimRpcDeps } from './scim/rpc.ts';

export interface OrgsDeps {
  /** the deployment's credential resolution (null: every orgs RPC answers 401) */
  authenticator: Authenticator | null;
  /** the SCIM endpoint administration and server (behaviour.md §6.4) */
  scim: Omit<ScimRpcDeps, 'authenticator'>;
}

export function createOrgsService(deps: OrgsDeps): ServiceImplementation<'gatehouse.orgs.v1.OrgsService'> {
  const desc = serviceDescriptor('orgs');
  const pending = Object.fromEntries([...desc.methods.keys()].map((rpc) => [rpc, notImplemented])) as unknown as HandlersOf<orgs.OrgsService>;
  return defineService(desc, { ...pending, ...scimHandlers({ ...deps.scim, authenticator: deps.authenticator }) }, createAuthGuard(deps.authenticator));
}
