/**
 * @module @gatehouse/delivery
 * What admin and the notifications worker share about outbound deliveries: the §5.6 outbound guard,
 * the guarded POST, webhook signing (behaviour.md §5.4), the email template language (§5.5) and the
 * development outbox (issue 33 §4).
 */
export { checkEndpoint, hostOf, isRefusedAddress, parseEndpoint, PRIVATE_TARGET_REASON, systemResolver, type HostResolver } from './guard.ts';
export {
  guardedGet, guardedPost, MAX_RESPONSE_BYTES, OUTBOUND_TIMEOUT_MS, OutboundError, type OutboundGet, type OutboundGetResponse, type OutboundPost, type OutboundResponse,
} from './http.ts';
export { newSigningSecret, SIGNATURE_HEADER, signWebhookBody, WEBHOOK_USER_AGENT } from './signature.ts';
export { escapeHtml, parseTemplate, renderTemplate, validateTemplateSyntax, type TemplatePart } from './template-engine.ts';
export { createDevOutbox, DEV_OUTBOX_CAPACITY, type DevOutbox, type DevOutboxMessage } from './dev-outbox.ts';
