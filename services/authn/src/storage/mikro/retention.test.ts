/**
 * @module @gatehouse/authn/storage/mikro/retention.test
 * authn's retention rules (issue 23) on SQLite, PostgreSQL, MariaDB and MongoDB (FerretDB): per swept table, expired rows
 * planted, two sweepers (replicas) at once, expired rows gone once each, live rows kept.
 */
import { randomUUID } from 'node:crypto';
import { ATTEMPT_SLOT_RETENTION_SECONDS } from '@gatehouse/db';
import { describeRetention } from '@gatehouse/db/retention-suite';
import { authnSchema } from './index.ts';
import { AUTHN_RETENTION, CODE_GRACE_SECONDS } from './retention.ts';

const session = (expiresAt: number): Record<string, unknown> => ({
  id: randomUUID(), user_id: randomUUID(), handle_hash: randomUUID().replaceAll('-', '').padEnd(64, '0'), login_method: 'basic_auth', roles: '["user"]', scope: '["openid"]',
  auth_time: expiresAt - 86_400, expires_at: expiresAt, refresh_token_id: null, created_at: expiresAt - 86_400,
});
const link = (expiresAt: number, consumedAt: number | null): Record<string, unknown> => ({
  id: randomUUID(), identifier: 'forgot_password', email: 'ada@example.com', token_hash: randomUUID().replaceAll('-', '').padEnd(64, '0'),
  expires_at: expiresAt, redirect_uri: null, state: null, scope: null, roles: null, user_id: null, consumed_at: consumedAt,
  created_at: expiresAt - 1800, updated_at: expiresAt - 1800,
});
const code = (expiresAt: number, consumedAt: number | null): Record<string, unknown> => ({
  code_hash: randomUUID().replaceAll('-', '').padEnd(64, '0'), client_id: 'client-1', redirect_uri: 'https://app.example.com/cb', code_challenge: null,
  user_id: randomUUID(), session_id: randomUUID(), grant_json: '{}', expires_at: expiresAt, consumed_at: consumedAt, issued_session_id: consumedAt === null ? null : randomUUID(),
});
const consentRequest = (expiresAt: number, consumedAt: number | null): Record<string, unknown> => ({
  ticket_hash: randomUUID().replaceAll('-', '').padEnd(64, '0'), session_id: randomUUID(), user_id: randomUUID(), client_id: 'client-1',
  params_json: '{}', expires_at: expiresAt, consumed_at: consumedAt,
});
const device = (expiresAt: number, consumedAt: number | null): Record<string, unknown> => ({
  device_code_hash: randomUUID().replaceAll('-', '').padEnd(64, '0'), user_code_hash: randomUUID().replaceAll('-', '').padEnd(64, '0'), client_id: 'client-1',
  scope: 'openid', status: consumedAt === null ? 'pending' : 'approved', user_id: null, grant_json: null, poll_interval: 5, last_polled_at: null,
  expires_at: expiresAt, consumed_at: consumedAt,
});
const sessionClient = (sid: string, expiresAt: number): Record<string, unknown> => ({
  session_id: randomUUID(), sid, user_id: randomUUID(), client_id: 'client-1', expires_at: expiresAt,
});

describeRetention(authnSchema, AUTHN_RETENTION, {
  // expired a second ago vs. still valid for a second
  authn_sessions: { expired: (i, now) => session(now - 1 - i), live: (i, now) => session(now + 1 + i) },
  // claimed before vs. within the longest window (a day)
  authn_attempt_slots: {
    expired: (i, now) => ({ id: `k#${i}`, attempt_key: 'k', attempted_at: now - ATTEMPT_SLOT_RETENTION_SECONDS - 1 - i }),
    live: (i, now) => ({ id: `l${i}#0`, attempt_key: `l${i}`, attempted_at: now - ATTEMPT_SLOT_RETENTION_SECONDS + 1 + i }),
  },
  // expired links go, used or not; a live link stays even once consumed (until it expires)
  authn_verification_requests: { expired: (i, now) => link(now - 1 - i, i % 2 ? now - 2000 : null), live: (i, now) => link(now + 1 + i, i === 0 ? now - 10 : null) },
  // codes stay an hour past expiry (a replay still answers "already used" and revokes), then go, redeemed or not
  authn_authorization_codes: {
    expired: (i, now) => code(now - CODE_GRACE_SECONDS - 1 - i, i % 2 ? now - CODE_GRACE_SECONDS - 100 : null),
    live: (i, now) => code(now - CODE_GRACE_SECONDS + 1 + i, i === 0 ? now - 10 : null),
  },
  // a jti goes once its assertion is no longer accepted (expires_at already includes the clock tolerance)
  authn_used_jtis: {
    expired: (i, now) => ({ jti_key: `https://issuer.example.com|old-${i}`, expires_at: now - 1 - i }),
    live: (i, now) => ({ jti_key: `https://issuer.example.com|live-${i}`, expires_at: now + i }),
  },
  // a consent page past its expiry cannot be answered, answered or not
  authn_consent_requests: { expired: (i, now) => consentRequest(now - 1 - i, i % 2 ? now - 100 : null), live: (i, now) => consentRequest(now + 1 + i, i === 0 ? now - 10 : null) },
  // a device code stays an hour past expiry (polls answer expired_token), then goes, redeemed or not
  authn_device_authorizations: {
    expired: (i, now) => device(now - CODE_GRACE_SECONDS - 1 - i, i % 2 ? now - CODE_GRACE_SECONDS - 100 : null),
    live: (i, now) => device(now - CODE_GRACE_SECONDS + 1 + i, i === 0 ? now - 10 : null),
  },
  // a sign-on session's relying party goes once its grants have expired
  authn_session_clients: {
    expired: (i, now) => sessionClient(`old-${i}`, now - 1 - i),
    live: (i, now) => sessionClient(`live-${i}`, now + 1 + i),
  },
});
