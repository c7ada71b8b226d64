/** @module @gatehouse/admin/rpc/delete-webhook — AdminService.DeleteWebhook (POST /v1/admin/delete_webhook, behaviour.md §5.4). */
import { deleteWebhook, WEBHOOK_DELETED } from '../domain/webhooks.ts';
import { adminAudit, type AdminHandler, type RpcContext } from './deps.ts';

/** Deletes a webhook, its logs and its pending deliveries. @throws AppError as {@link deleteWebhook} */
export const deleteWebhookRpc = (c: RpcContext): AdminHandler<'DeleteWebhook'> => async (req, ctx) => {
  await deleteWebhook(c, await adminAudit(c, ctx), req.id);
  return { message: WEBHOOK_DELETED };
};
