/**
 * @module @gatehouse/admin/domain/events
 * The names webhooks and email templates are keyed by: the 13 domain events of behaviour.md §8 and
 * the 6 email events of §5.5.
 */

/** behaviour.md §8: every event a webhook may subscribe to. */
export const WEBHOOK_EVENTS: readonly string[] = Object.freeze([
  'user.created', 'user.signup', 'user.login', 'user.access_revoked', 'user.access_enabled', 'user.deleted',
  'user.deactivated', 'user.provisioned', 'user.deprovisioned', 'user.scim_updated',
  'group.created', 'group.updated', 'group.deleted',
]);

/** behaviour.md §5.5: every event an email template may be stored for. */
export const EMAIL_TEMPLATE_EVENTS: readonly string[] = Object.freeze([
  'basic_auth_signup', 'magic_link_login', 'update_email', 'forgot_password', 'invite_member', 'verify_otp',
]);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a UUID string: ids that are not cannot name a row (and never reach a uuid column). */
export const isUuid = (s: string): boolean => UUID.test(s);

/** The audit builder of one call: the rpc layer binds the caller, client IP and protocol (§5.7). */
export type AuditOf = (action: string, o: { resourceType: string; resourceId: string; details?: Record<string, unknown> }) => unknown;
