/**
 * @module @gatehouse/orgs/storage/mikro/retention
 * orgs' retention rules (issue 23), run by the libs/db sweeper (`startSweeper`, started in
 * `buildOrgs`); the README's "Retention" table documents each. Times are Unix seconds.
 */
import type { RetentionRule } from '@gatehouse/db';

/**
 * How long a pending domain entry is kept past its challenge's expiry. From expiry on it is no
 * longer listed and `verify_org_domain` answers `no pending verification challenge for this domain;
 * request one first` (behaviour.md §6.2) with or without the row; the grace only keeps
 * `delete_org_domain` of a just-expired entry answering as before, and a renewal keeping its `created_at`.
 */
export const PENDING_DOMAIN_GRACE_SECONDS = 24 * 3600;

/** The window of the hourly domain limits (behaviour.md §6.2, §10): older attempts count for nothing. */
export const DOMAIN_ATTEMPT_WINDOW_SECONDS = 3600;

/**
 * The tables orgs sweeps. Bounded without a rule: `orgs_organizations`, `orgs_members`, verified
 * `orgs_domains` entries and the SCIM tables (`orgs_scim_endpoints`, `orgs_scim_users`,
 * `orgs_scim_groups`: nothing in them expires; they go with their organization, a user's rows with the user);
 * `orgs_outbox` is emptied by the relay.
 */
export const ORGS_RETENTION: readonly RetentionRule[] = [
  // pending entries only: a verified entry has no challenge (challenge_expires_at is null)
  {
    table: 'orgs_domains', key: 'id',
    expired: { column: 'challenge_expires_at', isNull: ['verified_at'], before: (now) => now - PENDING_DOMAIN_GRACE_SECONDS },
  },
  // an attempt counts while created_at > now - 3600 (domain/domains.ts consumeAttempt)
  { table: 'orgs_domain_attempts', key: 'id', expired: { column: 'created_at', before: (now) => now - DOMAIN_ATTEMPT_WINDOW_SECONDS } },
];
