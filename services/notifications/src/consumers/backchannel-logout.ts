/**
 * @module @gatehouse/notifications/consumers/backchannel-logout
 * The `oauth.backchannel_logout` consumer (issue 34 §6, OIDC Back-Channel Logout 1.0 §2.5): POSTs the
 * logout token authn signed as the `logout_token` form parameter
 * (`application/x-www-form-urlencoded`) to the client's `backchannel_logout_uri`, through the outbound
 * guard of webhook delivery (no private address unless `--allow-private-webhook-targets`, no redirect
 * followed), with the webhook retries: up to 5 attempts, waits 1, 2, 4, 8 s. Retried: transport
 * errors, timeouts, 408, 429, 5xx. Not retried: 2xx (done; §2.8 answers 200), other 4xx (§2.8: 400
 * means the RP refused the token), a guard refusal.
 */
import type { Delivery, Envelope } from '@gatehouse/bus';
import type { BusEvents } from '@gatehouse/contracts';
import { OutboundError, WEBHOOK_USER_AGENT, type OutboundPost, type OutboundResponse } from '@gatehouse/delivery';
import type { Logger } from '@gatehouse/observability';
import type { DeliveryCounter } from '../metrics.ts';
import { isRetryableStatus, WEBHOOK_BACKOFF_MS, WEBHOOK_MAX_ATTEMPTS } from './webhook-deliver.ts';

/** Durable consumer name, stable across restarts. */
export const BACKCHANNEL_LOGOUT_CONSUMER = 'notifications-backchannel-logout';
export const BACKCHANNEL_LOGOUT_MAX_ATTEMPTS = WEBHOOK_MAX_ATTEMPTS;
export const BACKCHANNEL_LOGOUT_BACKOFF_MS = WEBHOOK_BACKOFF_MS;

export interface BackchannelLogoutDeps {
  /** one guarded POST (libs/delivery `guardedPost` under the flag) */
  post(p: Pick<OutboundPost, 'url' | 'headers' | 'body'>): Promise<OutboundResponse>;
  logger: Logger;
  deliveries: DeliveryCounter;
}

/** Thrown to make the bus retry. */
class RetryableLogout extends Error {}

/** Builds the handler given to `Bus.consume` for `oauth.backchannel_logout`. */
export function createBackchannelLogoutHandler(deps: BackchannelLogoutDeps): (envelope: Envelope, delivery: Delivery) => Promise<void> {
  return async (envelope, delivery) => {
    const job = (envelope.data ?? {}) as Partial<BusEvents['oauth.backchannel_logout']>;
    if (typeof job.backchannel_logout_uri !== 'string' || typeof job.logout_token !== 'string' || job.logout_token === '') {
      deps.logger.error({ job_id: envelope.id }, 'malformed back-channel logout job dropped');
      return;
    }
    const fields = { client_id: job.client_id, delivery_id: job.delivery_id, attempt: delivery.attempt };
    let status = 0;
    let retry: boolean;
    let error = '';
    try {
      const res = await deps.post({
        url: job.backchannel_logout_uri,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': WEBHOOK_USER_AGENT },
        body: new URLSearchParams({ logout_token: job.logout_token }).toString(),
      });
      status = res.status;
      retry = isRetryableStatus(res.status);
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
      retry = !(err instanceof OutboundError && err.kind === 'ssrf');
    }
    const ok = status >= 200 && status < 300;
    const outcome = ok ? 'sent' : retry && !delivery.isLastAttempt ? 'failed' : 'dead';
    deps.deliveries.inc({ event: 'oauth.backchannel_logout', outcome });
    if (ok) return;
    if (outcome === 'failed') {
      deps.logger.warn({ ...fields, http_status: status, error }, 'back-channel logout attempt failed, will retry');
      throw new RetryableLogout(`back-channel logout attempt ${delivery.attempt} failed`);
    }
    deps.logger.error({ ...fields, http_status: status, error }, retry ? 'back-channel logout failed after its last attempt' : 'back-channel logout refused, not retried');
  };
}
