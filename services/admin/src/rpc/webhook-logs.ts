/** @module @gatehouse/admin/rpc/webhook-logs — AdminService.WebhookLogs (POST /v1/admin/webhook_logs, behaviour.md §5.4, §10). */
import { listWebhookLogs } from '../domain/webhooks.ts';
import { webhookLogWire, type AdminHandler, type RpcContext } from './deps.ts';

/** Delivery attempts, newest first, optionally of one webhook. @throws AppError as {@link listWebhookLogs} */
export const webhookLogsRpc = (c: RpcContext): AdminHandler<'WebhookLogs'> => async (req) => {
  const { webhookLogs, pagination } = await listWebhookLogs(c, req.pagination, req.webhook_id);
  return { webhook_logs: webhookLogs.map(webhookLogWire), pagination };
};
