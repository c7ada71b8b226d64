/**
 * @module @gatehouse/orgs/rpc/domains
 * OrgsService.RequestOrgDomain, VerifyOrgDomain, AddVerifiedOrgDomain, DeleteOrgDomain and OrgDomains
 * (behaviour.md §6.2).
 */
import { addVerifiedDomain, deleteDomain, listDomains, requestDomain, verifyDomain, type DomainChallenge } from '../domain/domains.ts';
import { pageWindow, paginationOf } from '@gatehouse/contracts/pagination';
import type { DomainRecord } from '../storage/ports.ts';
import { audited, callerOf, domainWire, type AuditedOp, type OrgsHandler, type RpcContext } from './deps.ts';

export const DOMAIN_DELETED = 'org domain deleted successfully';

const domainOp = (action: string, domain: string, orgId: string | null | undefined): AuditedOp<DomainRecord> => ({
  action, resourceType: 'org_domain', resourceId: domain, context: { org_id: orgId ?? null }, of: (d) => ({ resourceId: d.domain, details: { org_id: d.orgId } }),
});

/** POST /v1/admin/request_org_domain (org admin or super) → OrgDomainChallenge. @throws AppError as {@link requestDomain} */
export const requestOrgDomainRpc = (c: RpcContext): OrgsHandler<'RequestOrgDomain'> => async (req, ctx) => {
  const caller = await callerOf(c, ctx);
  const ch = await audited(c, ctx, caller, {
    action: 'org_domain_requested', resourceType: 'org_domain', resourceId: req.domain, context: { org_id: req.org_id },
    of: (r: DomainChallenge) => ({ resourceId: r.domain, details: { org_id: req.org_id } }),
  }, (withEvents) => requestDomain(c, { orgId: req.org_id, domain: req.domain }, withEvents));
  return { domain: ch.domain, record_type: ch.recordType, record_name: ch.recordName, record_value: ch.recordValue, expires_at: ch.expiresAt };
};

/** POST /v1/admin/verify_org_domain (org admin or super) → OrgDomain. @throws AppError as {@link verifyDomain} */
export const verifyOrgDomainRpc = (c: RpcContext): OrgsHandler<'VerifyOrgDomain'> => async (req, ctx) => {
  const caller = await callerOf(c, ctx);
  const d = await audited(c, ctx, caller, domainOp('org_domain_verified', req.domain, req.org_id),
    (withEvents) => verifyDomain(c, { orgId: req.org_id, domain: req.domain }, withEvents));
  return domainWire(d);
};

/** POST /v1/admin/add_verified_org_domain (super-admin) → OrgDomain. @throws AppError as {@link addVerifiedDomain} */
export const addVerifiedOrgDomainRpc = (c: RpcContext): OrgsHandler<'AddVerifiedOrgDomain'> => async (req, ctx) => {
  const caller = await callerOf(c, ctx);
  const d = await audited(c, ctx, caller, domainOp('org_domain_verified', req.domain, req.org_id),
    (withEvents) => addVerifiedDomain(c, { orgId: req.org_id, domain: req.domain }, withEvents));
  return domainWire(d);
};

/** POST /v1/admin/delete_org_domain (org admin or super). @throws AppError as {@link deleteDomain} */
export const deleteOrgDomainRpc = (c: RpcContext): OrgsHandler<'DeleteOrgDomain'> => async (req, ctx) => {
  const caller = await callerOf(c, ctx);
  await audited(c, ctx, caller, domainOp('org_domain_deleted', req.domain, req.org_id),
    (withEvents) => deleteDomain(c, { domain: req.domain, orgId: req.org_id ?? null }, withEvents));
  return { message: DOMAIN_DELETED };
};

/** POST /v1/admin/org_domains (org admin or super). @throws AppError `not_found` `organization not found` */
export const orgDomainsRpc = (c: RpcContext): OrgsHandler<'OrgDomains'> => async (req) => {
  const w = pageWindow(req.pagination);
  const page = await listDomains(c, req.org_id, w);
  return { org_domains: page.rows.map(domainWire), pagination: paginationOf(w, page.total) };
};
