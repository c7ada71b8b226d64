/**
 * @module @gatehouse/mfa/storage/mikro/retention.test
 * mfa's retention rules (issue 23) on SQLite, PostgreSQL, MariaDB and MongoDB (FerretDB): per swept table, expired rows
 * planted, two sweepers (replicas) at once, expired rows gone once each, live rows kept (codes and
 * challenges past their expiry stay for the grace hour, so `otp expired` / `passkey challenge
 * expired` are still answered).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { ATTEMPT_SLOT_RETENTION_SECONDS } from '@gatehouse/db';
import { describeRetention } from '@gatehouse/db/retention-suite';
import { mfaSchema } from './schema.ts';
import { EXPIRED_ANSWER_GRACE_SECONDS, MFA_RETENTION } from './retention.ts';

const GRACE = EXPIRED_ANSWER_GRACE_SECONDS;
const session = (expiresAt: number): Record<string, unknown> => ({
  id: randomUUID(), handle_hash: randomBytes(32).toString('hex'), user_id: randomUUID(), purpose: 'login', channel: 'email', contact: 'ada@example.com',
  user_json: '{}', login_method: 'basic_auth', roles: '[]', scope: '[]', state: null, auth_time: expiresAt - 300, expires_at: expiresAt, created_at: expiresAt - 300,
});
const otp = (expiresAt: number): Record<string, unknown> => {
  const userId = randomUUID();
  return { id: `${userId}:email`, user_id: userId, channel: 'email', digest: 'd'.repeat(64), expires_at: expiresAt, sent_at: expiresAt - 300 };
};
const challenge = (expiresAt: number): Record<string, unknown> => ({
  challenge: randomBytes(32).toString('base64url'), ceremony: 'login', user_id: null, mfa_session_id: null, expires_at: expiresAt, created_at: expiresAt - 300,
});

describeRetention(mfaSchema, MFA_RETENTION, {
  // decoy sessions are rows like any other: they go when they expire
  mfa_sessions: { expired: (i, now) => session(now - 1 - i), live: (i, now) => session(now + 1 + i) },
  // kept an hour past expiry, then gone
  mfa_otps: { expired: (i, now) => otp(now - GRACE - 1 - i), live: (i, now) => otp(i === 0 ? now - GRACE + 1 : now + 1 + i) },
  // attempt slots: claimed before vs. within the longest window (a day)
  mfa_attempt_slots: {
    expired: (i, now) => ({ id: `otp:${i}#0`, attempt_key: `otp:${i}`, attempted_at: now - ATTEMPT_SLOT_RETENTION_SECONDS - 1 - i }),
    live: (i, now) => ({ id: `otp:${i}#1`, attempt_key: `otp:${i}`, attempted_at: now - ATTEMPT_SLOT_RETENTION_SECONDS + 1 + i }),
  },
  webauthn_challenges: { expired: (i, now) => challenge(now - GRACE - 1 - i), live: (i, now) => challenge(i === 0 ? now - GRACE + 1 : now + 300 + i) },
});
