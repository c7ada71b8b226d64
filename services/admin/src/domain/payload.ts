/**
 * @module @gatehouse/admin/domain/payload
 * The JSON body of a webhook delivery (behaviour.md §5.4 payload): built once per (event, webhook),
 * so every attempt sends the same bytes and the same `delivery_id`.
 */
import { createHash } from 'node:crypto';

/** What the body is built from. */
export interface PayloadInput {
  deliveryId: string;
  webhookId: string | null;
  eventName: string;
  eventDescription: string;
  /** Unix seconds of the event */
  createdAt: number;
  /** the event's data (`{user, signup_method | login_method}` for user events, `{group}` for group events) */
  data: Record<string, unknown>;
}

/** The body text: `{delivery_id, webhook_id, event_name, event_description, created_at, user|group, auth_recipe?}`. */
export function webhookBody(p: PayloadInput): string {
  const body: Record<string, unknown> = {
    delivery_id: p.deliveryId,
    webhook_id: p.webhookId,
    event_name: p.eventName,
    event_description: p.eventDescription,
    created_at: p.createdAt,
  };
  if (p.eventName.startsWith('group.')) body['group'] = p.data['group'] ?? null;
  else body['user'] = p.data['user'] ?? null;
  if (p.eventName === 'user.signup') body['auth_recipe'] = p.data['signup_method'] ?? null;
  if (p.eventName === 'user.login') body['auth_recipe'] = p.data['login_method'] ?? null;
  return JSON.stringify(body);
}

/**
 * A delivery id derived from the event and the webhook, so a fan-out that runs twice (a
 * redelivered event) names the same delivery (receivers deduplicate on it, §5.4). UUIDv4-shaped.
 */
export function deliveryIdOf(eventId: string, webhookId: string): string {
  const h = createHash('sha256').update(`${eventId}:${webhookId}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x40;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** The synthetic data of `test_endpoint` (§5.4): a user `test_endpoint@example.com`, or a group. */
export function syntheticData(eventName: string, now: number): Record<string, unknown> {
  if (eventName.startsWith('group.')) {
    return { group: { id: '00000000-0000-4000-8000-000000000001', org_id: '00000000-0000-4000-8000-000000000002', display_name: 'Test group', external_id: null } };
  }
  return {
    user: {
      id: '00000000-0000-4000-8000-000000000000', email: 'test_endpoint@example.com', email_verified: true, signup_methods: 'basic_auth',
      given_name: 'Test', family_name: 'Endpoint', middle_name: null, nickname: null, preferred_username: 'test_endpoint@example.com',
      gender: null, birthdate: null, picture: null, phone_number: null, phone_number_verified: false, roles: ['user'],
      created_at: now, updated_at: now, revoked_timestamp: null, is_multi_factor_auth_enabled: null, has_skipped_mfa_setup_at: null,
      mfa_locked_at: null, enrolled_mfa_methods: [], app_data: null,
    },
    signup_method: 'basic_auth',
    login_method: 'basic_auth',
  };
}
