/**
 * @module @gatehouse/admin/domain/webhooks
 * Webhook administration (behaviour.md §5.4): add, update (with secret rotation), delete, get,
 * list, and the logs of their deliveries. Every change is recorded in the audit log (§5.7) through
 * the outbox of the same transaction.
 */
import { randomUUID } from 'node:crypto';
import { AppError } from '@gatehouse/errors';
import { newSigningSecret } from '@gatehouse/delivery';
import type { WebhookLogRecord, WebhookRecord } from '../storage/ports.ts';
import type { AdminDomain } from './deps.ts';
import { isUuid, type AuditOf } from './events.ts';
import { pageWindow, paginationOf, type PaginationInput } from '@gatehouse/contracts/pagination';
import { descriptionOf, endpointText, eventNameOf, headersOf } from './webhook-input.ts';

/** behaviour.md §9 */
export const WEBHOOK_ADDED = 'Webhook added successfully';
export const WEBHOOK_UPDATED = 'Webhook updated successfully.';
export const WEBHOOK_DELETED = 'Webhook deleted successfully';

export interface AddWebhookInput {
  eventName?: string | null;
  endpoint?: string | null;
  eventDescription?: string | null;
  enabled?: boolean | null;
  headers?: unknown;
}

export interface UpdateWebhookInput extends AddWebhookInput {
  id?: string | null;
  rotateSigningSecret?: boolean | null;
}

/**
 * @throws AppError `invalid_argument` `webhook ID required` (blank), `not_found` `webhook not found`
 */
async function existing(d: AdminDomain, id: string | null | undefined): Promise<WebhookRecord> {
  const key = (id ?? '').trim();
  if (key === '') throw new AppError('invalid_argument', 'webhook ID required');
  const w = isUuid(key) ? await d.store.webhooks.get(key.toLowerCase()) : null;
  if (!w) throw new AppError('not_found', 'webhook not found');
  return w;
}

/**
 * Adds a webhook with a new signing secret, shown only in this answer.
 * @throws AppError `invalid_argument` (event name, endpoint, headers; §5.6 refusals)
 */
export async function addWebhook(d: AdminDomain, audit: AuditOf, input: AddWebhookInput): Promise<{ id: string; signingSecret: string }> {
  const eventName = eventNameOf(input.eventName);
  const endpoint = endpointText(input.endpoint);
  const headers = headersOf(input.headers);
  const eventDescription = descriptionOf(input.eventDescription, eventName);
  await d.outbound.checkEndpoint(endpoint);
  const now = d.now();
  const w: WebhookRecord = {
    id: randomUUID(), eventName, eventDescription, endpoint, enabled: input.enabled ?? true, headers,
    signingSecret: newSigningSecret(), createdAt: now, updatedAt: now,
  };
  await d.store.transaction(async (tx) => {
    await tx.webhooks.insert(w);
    tx.events.emit('audit.recorded', audit('admin.webhook_created', { resourceType: 'webhook', resourceId: w.id, details: { event_name: eventName } }));
  });
  return { id: w.id, signingSecret: w.signingSecret! };
}

/**
 * Updates the fields given; `headers` replaces the map. A rotation returns the new secret once.
 * @throws AppError `invalid_argument`, `not_found` `webhook not found`
 */
export async function updateWebhook(d: AdminDomain, audit: AuditOf, input: UpdateWebhookInput): Promise<{ signingSecret: string | null }> {
  const current = await existing(d, input.id);
  const next: WebhookRecord = { ...current };
  const changed: string[] = [];
  if (input.eventName != null) { next.eventName = eventNameOf(input.eventName); changed.push('event_name'); }
  if (input.eventDescription != null) { next.eventDescription = descriptionOf(input.eventDescription, next.eventName); changed.push('event_description'); }
  if (input.endpoint != null) {
    next.endpoint = endpointText(input.endpoint);
    await d.outbound.checkEndpoint(next.endpoint);
    changed.push('endpoint');
  }
  if (input.enabled != null) { next.enabled = input.enabled; changed.push('enabled'); }
  if (input.headers != null) { next.headers = headersOf(input.headers); changed.push('headers'); }
  const rotated = input.rotateSigningSecret === true ? newSigningSecret() : null;
  if (rotated) { next.signingSecret = rotated; changed.push('signing_secret'); }
  next.updatedAt = d.now();
  await d.store.transaction(async (tx) => {
    if (!(await tx.webhooks.update(next))) throw new AppError('not_found', 'webhook not found');
    tx.events.emit('audit.recorded', audit('admin.webhook_updated', { resourceType: 'webhook', resourceId: next.id, details: { changed_fields: changed } }));
  });
  return { signingSecret: rotated };
}

/**
 * Deletes a webhook and its logs; its pending deliveries find it gone and are dropped.
 * @throws AppError `invalid_argument` `webhook ID required`, `not_found` `webhook not found`
 */
export async function deleteWebhook(d: AdminDomain, audit: AuditOf, id: string | null | undefined): Promise<void> {
  const w = await existing(d, id);
  await d.store.transaction(async (tx) => {
    if (!(await tx.webhooks.delete(w.id))) throw new AppError('not_found', 'webhook not found');
    tx.events.emit('audit.recorded', audit('admin.webhook_deleted', { resourceType: 'webhook', resourceId: w.id, details: { event_name: w.eventName } }));
  });
}

/** @throws AppError `invalid_argument` `webhook ID required`, `not_found` `webhook not found` */
export const getWebhook = (d: AdminDomain, id: string | null | undefined): Promise<WebhookRecord> => existing(d, id);

/** Webhooks, newest first, §10 pagination. @throws AppError `invalid_argument` (pagination) */
export async function listWebhooks(d: AdminDomain, pagination: PaginationInput | null | undefined) {
  const w = pageWindow(pagination);
  const page = await d.store.webhooks.list(w);
  return { webhooks: page.rows, pagination: paginationOf(w, page.total) };
}

/**
 * Delivery attempts, newest first, of one webhook or of all.
 * @throws AppError `invalid_argument` (pagination), `not_found` `webhook not found` for an unknown `webhook_id`
 */
export async function listWebhookLogs(d: AdminDomain, pagination: PaginationInput | null | undefined, webhookId: string | null | undefined): Promise<{ webhookLogs: WebhookLogRecord[]; pagination: ReturnType<typeof paginationOf> }> {
  const w = pageWindow(pagination);
  const id = webhookId?.trim() ? (await existing(d, webhookId)).id : null;
  const page = await d.store.webhookLogs.list(w, id);
  return { webhookLogs: page.rows, pagination: paginationOf(w, page.total) };
}
