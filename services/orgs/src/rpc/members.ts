/**
 * @module @gatehouse/orgs/rpc/members
 * OrgsService.AddOrgMember, UpdateOrgMember (extension), RemoveOrgMember, OrgMembers and UserOrganizations
 * (behaviour.md §6.1).
 */
import { addMember, removeMember, updateMemberRoles, userMemberships } from '../domain/members.ts';
import { requireOrganization } from '../domain/organizations.ts';
import { pageWindow, paginationOf } from '@gatehouse/contracts/pagination';
import type { MemberRecord } from '../storage/ports.ts';
import { audited, callerOf, memberWire, organizationWire, type OrgsHandler, type RpcContext } from './deps.ts';

export const MEMBER_REMOVED = 'Organization member removed successfully';

/** POST /v1/admin/add_org_member (org admin or super). @throws AppError as {@link addMember} */
export const addOrgMemberRpc = (c: RpcContext): OrgsHandler<'AddOrgMember'> => async (req, ctx) => {
  const caller = await callerOf(c, ctx);
  const member = await audited(c, ctx, caller, {
    action: 'org_member_added', resourceType: 'org_membership', resourceId: null, context: { org_id: req.org_id, user_id: req.user_id },
    of: (m: MemberRecord) => ({ resourceId: m.id, details: { org_id: m.orgId, user_id: m.userId, roles: m.roles } }),
  }, (withEvents) => addMember(c, { orgId: req.org_id, userId: req.user_id, roles: req.roles }, withEvents));
  return memberWire(c, member);
};

/** POST /v1/admin/update_org_member (org admin or super): replaces the roles. @throws AppError as {@link updateMemberRoles} */
export const updateOrgMemberRpc = (c: RpcContext): OrgsHandler<'UpdateOrgMember'> => async (req, ctx) => {
  const caller = await callerOf(c, ctx);
  const member = await audited(c, ctx, caller, {
    action: 'org_member_updated', resourceType: 'org_membership', resourceId: null, context: { org_id: req.org_id, user_id: req.user_id },
    of: (m: MemberRecord) => ({ resourceId: m.id, details: { org_id: m.orgId, user_id: m.userId, roles: m.roles } }),
  }, (withEvents) => updateMemberRoles(c, { orgId: req.org_id, userId: req.user_id, roles: req.roles, bySuperAdmin: caller.superAdmin }, withEvents));
  return memberWire(c, member);
};

/** POST /v1/admin/remove_org_member (org admin or super). @throws AppError as {@link removeMember} */
export const removeOrgMemberRpc = (c: RpcContext): OrgsHandler<'RemoveOrgMember'> => async (req, ctx) => {
  const caller = await callerOf(c, ctx);
  await audited(c, ctx, caller, {
    action: 'org_member_removed', resourceType: 'org_membership', resourceId: null, context: { org_id: req.org_id, user_id: req.user_id },
    of: (m: MemberRecord) => ({ resourceId: m.id, details: { org_id: m.orgId, user_id: m.userId } }),
  }, (withEvents) => removeMember(c, { orgId: req.org_id, userId: req.user_id, bySuperAdmin: caller.superAdmin }, withEvents));
  return { message: MEMBER_REMOVED };
};

/** POST /v1/admin/org_members (org admin or super). @throws AppError `not_found` `organization not found` */
export const orgMembersRpc = (c: RpcContext): OrgsHandler<'OrgMembers'> => async (req) => {
  const w = pageWindow(req.pagination);
  const org = await requireOrganization(c, req.org_id);
  const page = await c.store.members.list(org.id, w);
  return { org_members: await Promise.all(page.rows.map((m) => memberWire(c, m))), pagination: paginationOf(w, page.total) };
};

/** POST /v1/admin/user_organizations (super-admin): the user's organizations with its roles. */
export const userOrganizationsRpc = (c: RpcContext): OrgsHandler<'UserOrganizations'> => async (req) => {
  const w = pageWindow(req.pagination);
  const page = await userMemberships(c, req.user_id, w);
  return {
    user_organizations: page.rows.map((r) => ({ organization: organizationWire(r.organization), roles: r.member.roles })),
    pagination: paginationOf(w, page.total),
  };
};
