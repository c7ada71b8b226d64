/**
 * @module @gatehouse/contracts/events
 * The bus's contract: each envelope name (behaviour.md §8, dotted lower-case) with the proto message
 * its `data` carries (proto/gatehouse/events/v1/events.proto). Producers emit through typed helpers
 * built on this map, and consumers parse into these types, so the shape lives in one place.
 */
import type { AuditRecorded, BackchannelLogoutJob, EmailSendJob, OrganizationDeleted, ScimGroupChanged, SmsSendJob, UserAccessChanged, UserCreated, UserDeactivated, UserDeleted, UserLoggedIn, UserScimChanged, WebhookAttempted, WebhookDeliverJob } from './gen/gatehouse/events/v1/events.ts';

export interface BusEvents {
  'user.created': UserCreated;
  'user.signup': UserCreated;
  'user.login': UserLoggedIn;
  'user.deactivated': UserDeactivated;
  'email.send': EmailSendJob;
  'audit.recorded': AuditRecorded;
  'sms.send': SmsSendJob;
  'user.deleted': UserDeleted;
  'user.access_revoked': UserAccessChanged;
  'user.access_enabled': UserAccessChanged;
  // issue 17 (webhooks, behaviour.md §5.4)
  'webhook.deliver': WebhookDeliverJob;
  'webhook.attempted': WebhookAttempted;
  // issue 19 (organizations, behaviour.md §6.1)
  'organization.deleted': OrganizationDeleted;
  // issue 19 (SCIM, behaviour.md §6.4, §8)
  'user.provisioned': UserScimChanged;
  'user.deprovisioned': UserScimChanged;
  'user.scim_updated': UserScimChanged;
  'group.created': ScimGroupChanged;
  'group.updated': ScimGroupChanged;
  'group.deleted': ScimGroupChanged;
  // issue 34 §6 (OIDC Back-Channel Logout 1.0)
  'oauth.backchannel_logout': BackchannelLogoutJob;
}

/** An envelope name of the bus's contract. */
export type BusEventName = keyof BusEvents;

/** Something events are emitted to, typed by the contract (an outbox transaction, the in-process bus). */
export interface TypedEventSink {
  emit<N extends BusEventName>(name: N, data: BusEvents[N]): void;
}
