/** @module @gatehouse/admin/rpc/webhooks — AdminService.Webhooks (POST /v1/admin/webhooks, behaviour.md §5.4, §10). */
import { listWebhooks } from '../domain/webhooks.ts';
import { webhookWire, type AdminHandler, type RpcContext } from './deps.ts';

/** Webhooks, newest first; the request is the page itself (graphql.md §2). @throws AppError `invalid_argument` (pagination) */
export const webhooksRpc = (c: RpcContext): AdminHandler<'Webhooks'> => async (req) => {
  const { webhooks, pagination } = await listWebhooks(c, req);
  return { webhooks: webhooks.map(webhookWire), pagination };
};
