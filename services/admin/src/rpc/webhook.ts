/** @module @gatehouse/admin/rpc/webhook — AdminService.Webhook (POST /v1/admin/webhook, behaviour.md §5.4). */
import { getWebhook } from '../domain/webhooks.ts';
import { webhookWire, type AdminHandler, type RpcContext } from './deps.ts';

/** One webhook, without its secret. @throws AppError as {@link getWebhook} */
export const webhookRpc = (c: RpcContext): AdminHandler<'Webhook'> => async (req) => webhookWire(await getWebhook(c, req.id));
