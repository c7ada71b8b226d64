/**
 * @module @gatehouse/authn/storage/mikro/retention
 * authn's retention rules (issue 23), run by the libs/db sweeper (`startSweeper`); the README's
 * "Retention" table documents each. Times are Unix seconds.
 */
import { LOCKOUT_WINDOW_SECONDS } from '@gatehouse/auth';
import type { RetentionRule } from '@gatehouse/db';

/** The tables authn sweeps; `authn_users` is bounded by accounts, `authn_outbox` by the relay. */
export const AUTHN_RETENTION: readonly RetentionRule[] = [
  // a session past expires_at validates nowhere (behaviour.md §2.1) and is refused as unknown
  { table: 'authn_sessions', key: 'id', expired: (now) => ({ where: 'expires_at < ?', params: [now] }) },
  // a failure older than the sliding 15 min window counts for no lockout (behaviour.md §3.3 step 3)
  { table: 'authn_login_failures', key: 'seq', expired: (now) => ({ where: 'failed_at < ?', params: [now - LOCKOUT_WINDOW_SECONDS] }) },
  // an expired link is "invalid" whether its row exists or not; consumed ones go at the same time
  { table: 'authn_verification_requests', key: 'id', expired: (now) => ({ where: 'expires_at < ?', params: [now] }) },
];
