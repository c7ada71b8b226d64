/**
 * @module @gatehouse/mfa/storage/mikro/retention
 * mfa's retention rules (issue 23), run by the libs/db sweeper (`startSweeper`); the README's
 * "Retention" table documents each. Times are Unix seconds.
 */
import { ATTEMPT_SLOT_RETENTION_SECONDS, type RetentionRule } from '@gatehouse/db';

/**
 * How long an expired code or passkey challenge is kept: verify_otp answers `otp expired` and the
 * WebAuthn verifies `passkey challenge expired` (behaviour.md §4.3) for a row past its expiry, and
 * the longest MFA session that can still present it lives 600 s; an hour covers both.
 */
export const EXPIRED_ANSWER_GRACE_SECONDS = 3600;

/**
 * The tables mfa sweeps. Bounded without a rule: `mfa_totp` (one active and one pending row per
 * user), `mfa_recovery_codes` (one set per slot per user), `mfa_otp_enrolments` (one per user and
 * channel), `webauthn_credentials` (the user's passkeys); all go with the user (`user.deleted`).
 */
export const MFA_RETENTION: readonly RetentionRule[] = [
  // an expired MFA session (decoys included) is refused as `invalid session` (behaviour.md §4.2)
  { table: 'mfa_sessions', key: 'id', expired: { column: 'expires_at', before: (now) => now } },
  { table: 'mfa_otps', key: 'id', expired: { column: 'expires_at', before: (now) => now - EXPIRED_ANSWER_GRACE_SECONDS } },
  // a slot claimed longer ago than the longest window (the daily send cap) counts for nothing
  { table: 'mfa_attempt_slots', key: 'id', expired: { column: 'attempted_at', before: (now) => now - ATTEMPT_SLOT_RETENTION_SECONDS } },
  { table: 'webauthn_challenges', key: 'challenge', expired: { column: 'expires_at', before: (now) => now - EXPIRED_ANSWER_GRACE_SECONDS } },
];
