/**
 * @module @gatehouse/orgs/storage/mikro/retention.test
 * orgs' retention rules (issue 23) on SQLite, PostgreSQL, MariaDB and MongoDB (FerretDB): per swept table, expired rows
 * planted, two sweepers (replicas) at once, expired rows gone once each, live rows kept (verified
 * domains are never swept; pending ones stay for the grace day past their challenge's expiry).
 */
import { randomUUID } from 'node:crypto';
import { describeRetention } from '@gatehouse/db/retention-suite';
import { orgsSchema } from './schema.ts';
import { DOMAIN_ATTEMPT_WINDOW_SECONDS, ORGS_RETENTION, PENDING_DOMAIN_GRACE_SECONDS } from './retention.ts';

const GRACE = PENDING_DOMAIN_GRACE_SECONDS;
const pending = (i: number, tag: string, challengeExpiresAt: number): Record<string, unknown> => ({
  id: randomUUID(), org_id: randomUUID(), domain: `${tag}-${i}.example.com`, verified_domain: null, verified_at: null,
  challenge_token: 'a'.repeat(52), challenge_expires_at: challengeExpiresAt, created_at: challengeExpiresAt - 86_400, updated_at: challengeExpiresAt - 86_400,
});
const verified = (i: number, verifiedAt: number): Record<string, unknown> => ({
  id: randomUUID(), org_id: randomUUID(), domain: `verified-${i}.example.com`, verified_domain: `verified-${i}.example.com`, verified_at: verifiedAt,
  challenge_token: null, challenge_expires_at: null, created_at: verifiedAt - 3600, updated_at: verifiedAt,
});
const attempt = (createdAt: number, kind: string): Record<string, unknown> => ({ id: randomUUID(), org_id: randomUUID(), kind, created_at: createdAt });

describeRetention(orgsSchema, ORGS_RETENTION, {
  // pending entries whose challenge expired over a day ago go; a pending entry in its grace day, a
  // live challenge and a verified entry (years old) stay
  orgs_domains: {
    expired: (i, now) => pending(i, 'stale', now - GRACE - 1 - i),
    live: (i, now) => (i === 0 ? pending(i, 'grace', now - GRACE + 1) : i === 1 ? pending(i, 'live', now + 3600) : verified(i, now - 3 * 365 * 86_400)),
  },
  // outside vs. inside the hourly window of the domain limits
  orgs_domain_attempts: {
    expired: (i, now) => attempt(now - DOMAIN_ATTEMPT_WINDOW_SECONDS - 1 - i, i % 2 ? 'verify' : 'request'),
    live: (i, now) => attempt(now - DOMAIN_ATTEMPT_WINDOW_SECONDS + 1 + i, 'request'),
  },
});
