/**
 * @module @gatehouse/orgs/rpc/internal
 * OrgsInternal: the org-admin gate other services ask (behaviour.md §5.1), and the organization a
 * verified domain routes to (§6.2, for org discovery).
 */
import { isUuid } from '../domain/members.ts';
import { orgOfVerifiedDomain } from '../domain/domains.ts';
import { organizationWire, type OrgsInternalHandler, type RpcContext } from './deps.ts';

/** Whether the user's membership in the org holds `service:org_admin`. */
export const isOrgAdminRpc = (c: RpcContext): OrgsInternalHandler<'IsOrgAdmin'> => async (req) => ({
  org_admin: isUuid(req.org_id) && await c.store.members.isOrgAdmin(req.user_id, req.org_id.toLowerCase()),
});

/** The enabled organization that verified the domain (of an email address or a bare domain), if any. */
export const orgOfVerifiedDomainRpc = (c: RpcContext): OrgsInternalHandler<'OrgOfVerifiedDomain'> => async (req) => {
  const orgId = await orgOfVerifiedDomain(c, req.domain);
  const org = orgId ? await c.store.organizations.get(orgId) : null;
  return org?.enabled ? { organization: organizationWire(org) } : {};
};
