/**
 * @module @gatehouse/authn/storage/mikro/retention
 * authn's retention rules (issue 23), run by the libs/db sweeper (`startSweeper`); the README's
 * "Retention" table documents each. Times are Unix seconds.
 */
import { ATTEMPT_SLOT_RETENTION_SECONDS, type RetentionRule } from '@gatehouse/db';

/**
 * How long an authorization code is kept past its 60 s expiry: a code presented again within it
 * answers `authorization code already used` and revokes the session issued from it (RFC 6749
 * §4.1.2, behaviour.md §2.2), or `authorization code expired`, rather than `invalid authorization code`.
 */
export const CODE_GRACE_SECONDS = 3600;

/**
 * The tables authn sweeps. Bounded without a rule: `authn_users` (accounts), `authn_oauth_clients`
 * and `authn_trusted_issuers` (configuration, deleted by an admin), `authn_consent_grants` (one per user,
 * client and scope set; deleted with the client, the user, or by a revocation); `authn_outbox` is emptied by the relay.
 * Sessions issued to OAuth clients (`client_id` set) are `authn_sessions` rows, swept by its rule.
 */
export const AUTHN_RETENTION: readonly RetentionRule[] = [
  // a session past expires_at validates nowhere (behaviour.md §2.1) and is refused as unknown
  { table: 'authn_sessions', key: 'id', expired: { column: 'expires_at', before: (now) => now } },
  // a slot claimed longer ago than the longest window (the daily send cap) counts for nothing
  { table: 'authn_attempt_slots', key: 'id', expired: { column: 'attempted_at', before: (now) => now - ATTEMPT_SLOT_RETENTION_SECONDS } },
  // an expired link is "invalid" whether its row exists or not; consumed ones go at the same time
  { table: 'authn_verification_requests', key: 'id', expired: { column: 'expires_at', before: (now) => now } },
  { table: 'authn_authorization_codes', key: 'code_hash', expired: { column: 'expires_at', before: (now) => now - CODE_GRACE_SECONDS } },
  // expires_at is the last instant the assertion is accepted (exp + clock tolerance): after it the
  // assertion is refused as expired before its jti is looked at (RFC 7523 §3 items 4 and 7)
  { table: 'authn_used_jtis', key: 'jti_key', expired: { column: 'expires_at', before: (now) => now } },
  // issue 34: a consent page past its expiry can no longer be answered
  { table: 'authn_consent_requests', key: 'ticket_hash', expired: { column: 'expires_at', before: (now) => now } },
  // issue 34 §5: a device code past its expiry answers expired_token until the row goes, then invalid_grant
  { table: 'authn_device_authorizations', key: 'device_code_hash', expired: { column: 'expires_at', before: (now) => now - CODE_GRACE_SECONDS } },
  // issue 34 §6: a relying party of a sign-on session whose grants have all expired has nothing to log out
  { table: 'authn_session_clients', key: 'session_id', expired: { column: 'expires_at', before: (now) => now } },
];
