/**
 * @module @gatehouse/auth
 * Credential resolution shared by every service: cookies, bearer JWT, admin secret/session (ARCHITECTURE §2, behaviour.md §2.3).
 */
export {
  COOKIE_ADMIN, COOKIE_MFA, COOKIE_SESSION, COOKIE_SESSION_DOMAIN, HOST_PREFIX, TWO_LEVEL_PUBLIC_SUFFIXES,
  adminCookie, clearAdminCookie, clearMfaCookie, clearSessionCookies, mfaCookie, ownCookie, ownCookieName, parseCookies,
  pathUnder, registrableDomain, serializeCookie, sessionCookies,
  type AppCookieOptions, type OwnCookieOptions, type SameSite, type SetCookieOptions,
} from './cookies.ts';
export {
  ATTEMPTS_METRIC, LOCKOUT_MAX_FAILURES, LOCKOUT_MESSAGE, LOCKOUT_WINDOW_SECONDS, claimAttempt, countAttempts, createMemoryAttemptLog, slotAttemptLog,
  type AttemptClaim, type AttemptLog, type ClaimResult,
} from './lockout.ts';
export { createMemorySessionStore, SESSION_TOUCH_INTERVAL_SECONDS, SESSION_USER_AGENT_MAX_CHARS, type SessionRecord, type SessionStore } from './session-store.ts';
export {
  createCachedActivityCheck, createCachedSessionStore,
  type CacheOptions, type CachedActivityCheck, type SessionCacheOptions,
} from './session-cache.ts';
export {
  INVALIDATION_POLL_MS, combineVersions, createLocalInvalidation, createPostgresInvalidation, createRedisInvalidation,
  type InvalidationChannel, type InvalidationOptions, type InvalidationTopic,
} from './invalidation.ts';
export { createRedisSessionStore, type RedisSessionStore, type RedisSessionStoreOptions } from './redis-session-store.ts';
export { SERVICE_ACCOUNT_PREFIX, createAuthenticator, scopeClaim, type AdminCaller, type Authenticator, type AuthenticatorOptions, type ServiceAccountCaller, type UserCaller } from './authenticator.ts';
export { adminSessionCheck, createPlatformAuth, jwtOptionsOf } from './from-config.ts';
export {
  ADMIN_SECRET_MAX_FAILURES, ADMIN_SESSION_ABSOLUTE_SECONDS, ADMIN_SESSION_IDLE_SECONDS,
  adminAccessStoreFor, createMemoryAdminAccessStore, verifyAdminSecret, createRedisAdminAccessStore, newAdminHandle,
  type AdminAccessStore, type AdminSessionRecord,
} from './admin-access.ts';
export { createAuthGuard, type AuthGuardOptions, type OrgAdminDirectory } from './guard.ts';
export {
  DELEGATED_WRITE_SCOPE, OPERATION_SCOPE_PREFIX, delegationOfCall, delegationOfClaims, operationName, requireDelegatedScope, type Delegation,
} from './delegation.ts';
export { SUPER_ADMIN_ACTOR, actorOf, auditRecord, type AuditActor, type AuditDetails } from './audit.ts';
export {
  SEND_CAP_MESSAGE, SEND_CAP_PER_DAY_DEFAULT, SEND_CAP_PER_HOUR_DEFAULT, SMS_COUNTRY_REFUSED, assertSmsCountryAllowed, claimSend, endSendInterval, sendCapsOf,
  type SendCapOptions, type SendClaim, type SendRequest,
} from './send-caps.ts';
