/**
 * @module @gatehouse/orgs/rpc/organizations
 * OrgsService.CreateOrganization, UpdateOrganization, DeleteOrganization, Organization and
 * Organizations (behaviour.md §6.1): wire message → domain call → wire response, with the §5.7 audit.
 */
import { createOrganization, deleteOrganization, requireOrganization, updateOrganization } from '../domain/organizations.ts';
import { pageWindow, paginationOf } from '@gatehouse/contracts/pagination';
import type { OrganizationRecord } from '../storage/ports.ts';
import { audited, callerOf, organizationWire, type OrgsHandler, type RpcContext } from './deps.ts';

export const ORGANIZATION_DELETED = 'Organization deleted successfully';

/** POST /v1/admin/create_organization (super-admin). @throws AppError as {@link createOrganization} */
export const createOrganizationRpc = (c: RpcContext): OrgsHandler<'CreateOrganization'> => async (req, ctx) => {
  const caller = await callerOf(c, ctx);
  const org = await audited(c, ctx, caller, {
    action: 'organization_created', resourceType: 'organization', resourceId: null, of: (o: OrganizationRecord) => ({ resourceId: o.id, details: { name: o.name } }),
  }, (withEvents) => createOrganization(c, { name: req.name, displayName: req.display_name }, withEvents));
  return organizationWire(org);
};

/** POST /v1/admin/update_organization (org admin or super). @throws AppError as {@link updateOrganization} */
export const updateOrganizationRpc = (c: RpcContext): OrgsHandler<'UpdateOrganization'> => async (req, ctx) => {
  const caller = await callerOf(c, ctx);
  const org = await audited(c, ctx, caller, {
    action: 'organization_updated', resourceType: 'organization', resourceId: req.id,
    of: (r: { org: OrganizationRecord; changed: string[] }) => ({ resourceId: r.org.id, details: { changed_fields: r.changed } }),
  }, async (withEvents) => {
    let changed: string[] = [];
    const updated = await updateOrganization(c, req.id, { name: req.name, displayName: req.display_name, enabled: req.enabled }, (tx, r) => {
      changed = r.changed;
      withEvents(tx, r);
    });
    return { org: updated, changed };
  });
  return organizationWire(org.org);
};

/** POST /v1/admin/delete_organization (super-admin). @throws AppError as {@link deleteOrganization} */
export const deleteOrganizationRpc = (c: RpcContext): OrgsHandler<'DeleteOrganization'> => async (req, ctx) => {
  const caller = await callerOf(c, ctx);
  await audited(c, ctx, caller, {
    action: 'organization_deleted', resourceType: 'organization', resourceId: req.id, of: (o: OrganizationRecord) => ({ resourceId: o.id, details: { name: o.name } }),
  }, (withEvents) => deleteOrganization(c, req.id, withEvents));
  return { message: ORGANIZATION_DELETED };
};

/** POST /v1/admin/organization (org admin or super). @throws AppError `not_found` `organization not found` */
export const organizationRpc = (c: RpcContext): OrgsHandler<'Organization'> => async (req) =>
  organizationWire(await requireOrganization(c, req.id));

/** POST /v1/admin/organizations (super-admin): newest first (§10). */
export const organizationsRpc = (c: RpcContext): OrgsHandler<'Organizations'> => async (req) => {
  const w = pageWindow(req.pagination);
  const page = await c.store.organizations.list(w);
  return { organizations: page.rows.map(organizationWire), pagination: paginationOf(w, page.total) };
};
