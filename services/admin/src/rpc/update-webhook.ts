/** @module @gatehouse/admin/rpc/update-webhook — AdminService.UpdateWebhook (POST /v1/admin/update_webhook, behaviour.md §5.4). */
import { updateWebhook, WEBHOOK_UPDATED } from '../domain/webhooks.ts';
import { adminAudit, type AdminHandler, type RpcContext } from './deps.ts';

/** Updates a webhook; `signing_secret` is the new secret after a rotation, else null. @throws AppError as {@link updateWebhook} */
export const updateWebhookRpc = (c: RpcContext): AdminHandler<'UpdateWebhook'> => async (req, ctx) => {
  const { signingSecret } = await updateWebhook(c, await adminAudit(c, ctx), {
    id: req.id, eventName: req.event_name, endpoint: req.endpoint, eventDescription: req.event_description, enabled: req.enabled,
    headers: req.headers, rotateSigningSecret: req.rotate_signing_secret,
  });
  return { message: WEBHOOK_UPDATED, signing_secret: signingSecret };
};
