/**
 * @module @gatehouse/delivery/signature
 * Webhook signing (behaviour.md §5.4): `x-service-signature: sha256=<lower-case hex HMAC-SHA-256 of
 * the raw body>`, keyed by the UTF-8 bytes of the webhook's own signing secret.
 */
import { createHmac, randomBytes } from 'node:crypto';

/** The signature header's name. */
export const SIGNATURE_HEADER = 'x-service-signature';
/** The User-Agent of every delivery. */
export const WEBHOOK_USER_AGENT = 'Gatehouse-Webhook/1';

/** `sha256=<hex>` of `body` under `secret`. */
export function signWebhookBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(body, 'utf8').digest('hex')}`;
}

/** A new signing secret: `whsec_` + 43 base64url characters (32 random bytes). */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
