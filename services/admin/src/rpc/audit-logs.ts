/** @module @gatehouse/admin/rpc/audit-logs — AdminService.AuditLogs (POST /v1/admin/audit_logs, behaviour.md §5.7, §10). */
import { listAuditLogs } from '../domain/audit-log.ts';
import type { AdminHandler, RpcContext } from './deps.ts';

/** The audit log, newest first, filtered. @throws AppError as {@link listAuditLogs} */
export const auditLogsRpc = (c: RpcContext): AdminHandler<'AuditLogs'> => async (req) => {
  const { auditLogs, pagination } = await listAuditLogs(c, {
    pagination: req.pagination, action: req.action, actorId: req.actor_id, resourceType: req.resource_type, resourceId: req.resource_id,
    fromTimestamp: req.from_timestamp, toTimestamp: req.to_timestamp,
  });
  return {
    audit_logs: auditLogs.map((a) => ({
      id: a.id, actor_id: a.actorId, actor_type: a.actorType, actor_email: a.actorEmail, action: a.action, resource_type: a.resourceType,
      resource_id: a.resourceId, ip_address: a.ipAddress, user_agent: a.userAgent, metadata: a.metadata, created_at: a.createdAt,
    })),
    pagination,
  };
};
