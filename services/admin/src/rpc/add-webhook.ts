/** @module @gatehouse/admin/rpc/add-webhook — AdminService.AddWebhook (POST /v1/admin/add_webhook, behaviour.md §5.4). */
import { addWebhook, WEBHOOK_ADDED } from '../domain/webhooks.ts';
import { adminAudit, type AdminHandler, type RpcContext } from './deps.ts';

/** Adds a webhook; the signing secret is in this answer only. @throws AppError as {@link addWebhook} */
export const addWebhookRpc = (c: RpcContext): AdminHandler<'AddWebhook'> => async (req, ctx) => {
  const { id, signingSecret } = await addWebhook(c, await adminAudit(c, ctx), {
    eventName: req.event_name, endpoint: req.endpoint, eventDescription: req.event_description, enabled: req.enabled, headers: req.headers,
  });
  return { message: WEBHOOK_ADDED, id, signing_secret: signingSecret };
};
