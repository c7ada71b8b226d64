/** @module @gatehouse/admin/rpc/webhook-target — AdminInternal.WebhookTarget (behaviour.md §5.4 delivery). */
import { isUuid } from '../domain/events.ts';
import type { AdminInternalHandler, RpcContext } from './deps.ts';

/** The current endpoint, headers and signing key of a webhook, for one delivery attempt; `found: false` once deleted. */
export const webhookTargetRpc = (c: RpcContext): AdminInternalHandler<'WebhookTarget'> => async (req) => {
  const w = isUuid(req.webhook_id ?? '') ? await c.store.webhooks.get(req.webhook_id) : null;
  if (!w) return { found: false, enabled: false, endpoint: '', headers: {}, signing_secret: '' };
  return { found: true, enabled: w.enabled, endpoint: w.endpoint, headers: w.headers, signing_secret: w.signingSecret ?? c.clientSecret };
};
