/**
 * @module @gatehouse/authn/storage/ports
 * What the authn domain needs from storage: users, the login lockout counters and a unit of work
 * that writes a state change and its events (outbox) in one transaction (ARCHITECTURE §4).
 */
import type { AttemptLog } from '@gatehouse/auth';

/** A stored user (behaviour.md §5.3). Times are Unix seconds; unset values are null. */
export interface UserRecord {
  /** lower-case UUIDv4 */
  id: string;
  /** trimmed and lower-cased, or null for a phone-only user */
  email: string | null;
  emailVerifiedAt: number | null;
  /** argon2id PHC string (or a legacy bcrypt hash), or null when the account has no password */
  passwordHash: string | null;
  /** comma list: `basic_auth`, `mobile_basic_auth`, `magic_link_login`, ... */
  signupMethods: string;
  givenName: string | null;
  familyName: string | null;
  middleName: string | null;
  nickname: string | null;
  gender: string | null;
  birthdate: string | null;
  picture: string | null;
  /** trimmed */
  phoneNumber: string | null;
  phoneNumberVerifiedAt: number | null;
  roles: string[];
  createdAt: number;
  updatedAt: number;
  /** set by admin revoke_access and by deactivate_account (behaviour.md §3.5) */
  revokedTimestamp: number | null;
  /** set by deactivate_account only; enable_access clears it with revokedTimestamp */
  deactivatedAt: number | null;
  /** null = follow the server (behaviour.md §4.1) */
  isMultiFactorAuthEnabled: boolean | null;
  hasSkippedMfaSetupAt: number | null;
  mfaLockedAt: number | null;
  appData: Record<string, unknown> | null;
}

/** User reads and writes. Emails are looked up already normalised (trimmed, lower-cased). */
export interface UserReader {
  findById(id: string): Promise<UserRecord | null>;
  findByEmail(email: string): Promise<UserRecord | null>;
  findByPhone(phoneNumber: string): Promise<UserRecord | null>;
}

export interface UserWriter {
  /**
   * Serialises, until commit, the transactions that claim the same email or phone, so the domain's
   * uniqueness check (spec §2: enforced by the application) cannot race. Call it before the check.
   * SQL: an advisory lock (PostgreSQL) or a locking read of the index gap (MySQL, MariaDB); MongoDB: a
   * claim document per normalised value, waited for while another unit of work holds it
   * (`mikro/claims.ts`, issue 32 §4).
   */
  lockIdentifier(kind: 'email' | 'phone', value: string): Promise<void>;
  create(user: UserRecord): Promise<void>;
  /** Replaces the stored record with the same id. */
  update(user: UserRecord): Promise<void>;
  /** Deletes the user row (behaviour.md §5.3 delete_user); a missing id is a no-op. */
  delete(id: string): Promise<void>;
}

import type { PageOf, PageWindow } from '@gatehouse/contracts/pagination';

/** One page of an admin list (behaviour.md §10) and the rows it returns. */
export type { PageWindow as PageRequest, PageOf as Page };

/** Events written with the state change (outbox): emitted once, after commit, never lost. */
export interface EventSink {
  /** `name` is a dotted event name (behaviour.md §8); `data` is JSON-serialisable */
  emit(name: string, data: unknown): void;
}

/** Purposes of an emailed verification link (behaviour.md §5.3 `identifier`). */
export const VERIFICATION_PURPOSES = ['basic_auth_signup', 'magic_link_login', 'update_email', 'forgot_password', 'invite_member'] as const;
export type VerificationPurpose = (typeof VERIFICATION_PURPOSES)[number];

/**
 * A verification request (behaviour.md §2.1, §5.3): one emailed link. Only the SHA-256 of the
 * opaque token is stored; the token itself exists only in the link. Times are Unix seconds.
 */
export interface VerificationRequestRecord {
  /** lower-case UUIDv4 */
  id: string;
  identifier: VerificationPurpose;
  /** normalised address the link was sent to (for `update_email`: the new address) */
  email: string;
  /** lower-case hex SHA-256 of the token */
  tokenHash: string;
  expiresAt: number;
  redirectUri: string | null;
  /** magic links: the request's `state`, `scope` and `roles` */
  state: string | null;
  scope: string[] | null;
  roles: string[] | null;
  userId: string | null;
  /** set once when redeemed, or when a newer request of the same purpose superseded it */
  consumedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

/** Verification requests, inside a transaction. */
export interface VerificationStore {
  /**
   * Stores `r` and marks every unconsumed request with the same `email` and `identifier` consumed
   * at `r.createdAt` (behaviour.md §2.1: a new token invalidates the previous one).
   */
  issue(r: VerificationRequestRecord): Promise<void>;
  findByTokenHash(tokenHash: string): Promise<VerificationRequestRecord | null>;
  /** the unconsumed request for the address and purpose (the newest if several), expired or not */
  findPending(email: string, identifier: VerificationPurpose): Promise<VerificationRequestRecord | null>;
  /** `createdAt` of the newest request for the address and purpose, consumed or not; null when none */
  lastIssuedAt(email: string, identifier: VerificationPurpose): Promise<number | null>;
  /** marks `id` consumed at `at` when it is still unconsumed; true only for the call that did it (single use) */
  consume(id: string, at: number): Promise<boolean>;
  /** deletes every request of `userId` or sent to one of `emails` (delete_user); returns how many */
  deleteForUser(userId: string, emails: readonly string[]): Promise<number>;
}

/**
 * A link from an upstream identity to a user (issue 20, federated login): the upstream's issuer
 * (social provider name, OIDC issuer URL or SAML IdP entity ID) and its stable subject (OIDC `sub`,
 * GitHub numeric id, SAML NameID). A returning upstream user resolves through it even after their
 * upstream email changed. Deleted with the user. Times are Unix seconds.
 */
export interface IdentityLinkRecord {
  /** lower-case UUIDv4 */
  id: string;
  /** at most 512 characters */
  issuer: string;
  /** at most 255 characters */
  subject: string;
  userId: string;
  /** the signup/login method that created it: a provider name or `sso` */
  method: string;
  createdAt: number;
}

/** Identity links, inside a transaction; (issuer, subject) is unique. */
export interface IdentityLinkStore {
  find(issuer: string, subject: string): Promise<IdentityLinkRecord | null>;
  /** stores `r`; a second link of the same (issuer, subject) fails the transaction */
  link(r: IdentityLinkRecord): Promise<void>;
  /** deletes one link (a stale link whose user is gone) */
  unlink(id: string): Promise<void>;
  /** deletes every link of `userId` (delete_user); returns how many */
  deleteForUser(userId: string): Promise<number>;
}

/** What a transaction sees. Uniqueness of email and phone is checked by the domain inside it. */
export interface AuthnTx {
  users: UserReader & UserWriter;
  verifications: VerificationStore;
  /** issue 20: upstream identities linked to users */
  identities: IdentityLinkStore;
  events: EventSink;
}

export interface UserRepository extends UserReader {
  /**
   * Runs `fn` in one transaction: every write and event commits together, or nothing does when
   * `fn` throws (the error is rethrown).
   */
  transaction<T>(fn: (tx: AuthnTx) => Promise<T>): Promise<T>;
  /**
   * Users whose id, email, given_name, family_name or nickname contains `query` (case-insensitive;
   * null or empty: every user), ordered by created_at desc then id (behaviour.md §5.3, §10).
   */
  search(query: string | null, page: PageWindow): Promise<PageOf<UserRecord>>;
  /** Every verification request, created_at desc then id (behaviour.md §5.3 verification_requests). */
  listVerificationRequests(page: PageWindow): Promise<PageOf<VerificationRequestRecord>>;
}

/**
 * Password-login attempts per normalised identifier (behaviour.md §3.3 step 3, §10), claimed before
 * the password is compared (`authn_attempt_slots`); authn's send caps claim on the same log.
 */
export type LoginLockout = AttemptLog;

// ---- issue 18: the OAuth 2.0 / OpenID Provider ----

/**
 * An OAuth client, also a service account (behaviour.md §5.8). `id` is the `client_id`. The secret is
 * stored only as `hmac-sha256:<hex>` (keyed by `--encryption-key`) or, for imported clients, as a
 * legacy bcrypt hash that is re-hashed on its first successful use. Times are Unix seconds.
 */
export interface ClientRecord {
  /** lower-case UUIDv4; also the client_id */
  id: string;
  name: string;
  description: string | null;
  allowedScopes: string[];
  isActive: boolean;
  /** null for a public client (no secret: PKCE S256 required) */
  secretHash: string | null;
  /** exact-match redirect URIs (RFC 9700 §4.1.3) */
  redirectUris: string[];
  /** `authorization_code`, `refresh_token`, `client_credentials` */
  grantTypes: string[];
  isPublic: boolean;
  postLogoutRedirectUris: string[];
  /**
   * issue 34 §6: OIDC Back-Channel Logout 1.0 §2.2: where logout tokens are POSTed, and whether they
   * must carry `sid`; null: no back-channel logout
   */
  backchannelLogoutUri: string | null;
  backchannelLogoutSessionRequired: boolean;
  /**
   * issue 34 §6: OIDC Front-Channel Logout 1.0 §2: the page the end-session page loads in an iframe,
   * and whether it gets `iss` and `sid`; null: no front-channel logout
   */
  frontchannelLogoutUri: string | null;
  frontchannelLogoutSessionRequired: boolean;
  /**
   * issue 34 §4: RFC 9126 §6 `require_pushed_authorization_requests`: `/authorize` refuses this
   * client's requests that did not come through `/oauth/par`
   */
  requirePushedAuthorizationRequests: boolean;
  /**
   * issue 34: an admin marked the client first-party, so `/authorize` asks no consent (the server's
   * own client never asks); false for every other client, self-registered ones included
   */
  isFirstParty: boolean;
  /**
   * issue 34: HMAC-SHA-256 of the RFC 7592 registration access token of a client registered through
   * `POST /oauth/register` (RFC 7591), as `hmac-sha256:<hex>`; null for an admin's client
   */
  registrationTokenHash: string | null;
  /** issue 34: the address a self-registered client was registered from (the per-address rate limit); null otherwise */
  registeredIp: string | null;
  createdAt: number;
  updatedAt: number;
}

/** A trusted issuer of private-key JWT client assertions (behaviour.md §5.8, RFC 7523 §2.2). */
export interface TrustedIssuerRecord {
  id: string;
  serviceAccountId: string;
  name: string;
  issuerUrl: string;
  /** `oidc_discovery` or `static_jwks_url` */
  keySourceType: string;
  jwksUrl: string | null;
  expectedAud: string;
  subjectClaim: string;
  /** comma list; null or empty: no subject is allowed */
  allowedSubjects: string | null;
  issuerType: string;
  isActive: boolean;
  spiffeRefreshHintSeconds: number | null;
  enableTokenReview: boolean;
  kubernetesApiServerUrl: string | null;
  createdAt: number;
  updatedAt: number;
}

/**
 * A pending authorization code (RFC 6749 §4.1.2): only the SHA-256 of the code is stored, with what
 * it is bound to (client, redirect URI, PKCE challenge) and the grant it will issue.
 */
export interface AuthorizationCodeRecord {
  /** lower-case hex SHA-256 of the code */
  codeHash: string;
  clientId: string;
  redirectUri: string;
  /** RFC 7636 S256 challenge, or null (confidential client without PKCE) */
  codeChallenge: string | null;
  userId: string;
  /** the browser session the code was issued from (`sid`) */
  sessionId: string;
  /** JSON of the grant: scope, roles, nonce, authTime, loginMethod, amr */
  grant: string;
  expiresAt: number;
  /** set once redeemed; a second redemption finds it set */
  consumedAt: number | null;
  /** the session the redemption opened (revoked when the code is replayed) */
  issuedSessionId: string | null;
}

/**
 * issue 34: a user's remembered consent to a client for a set of scopes (one row per user, client and
 * scope set). Times are Unix seconds.
 */
export interface ConsentGrantRecord {
  /** lower-case UUIDv4 */
  id: string;
  userId: string;
  clientId: string;
  /** the scopes, sorted and de-duplicated */
  scope: string[];
  createdAt: number;
  updatedAt: number;
}

/**
 * issue 34: a consent page shown once: only the SHA-256 of its ticket is stored, with the browser
 * session it was shown to and the authorization request it answers (its parameters as JSON).
 */
export interface ConsentRequestRecord {
  /** lower-case hex SHA-256 of the ticket */
  ticketHash: string;
  sessionId: string;
  userId: string;
  clientId: string;
  /** JSON object of the /authorize parameters */
  params: string;
  expiresAt: number;
  /** set once answered; a second answer finds it set */
  consumedAt: number | null;
}

/** issue 34 §5: where a device authorization (RFC 8628) stands: waiting for the user, or answered. */
export type DeviceAuthorizationStatus = 'pending' | 'approved' | 'denied';

/**
 * issue 34 §5: one RFC 8628 device authorization request, from `/oauth/device_authorization` until its
 * device code is redeemed or expires. Times are Unix seconds.
 */
export interface DeviceAuthorizationRecord {
  /** lower-case hex SHA-256 of the device_code */
  deviceCodeHash: string;
  /** lower-case hex SHA-256 of the normalised user_code (its 8 letters, no dash) */
  userCodeHash: string;
  clientId: string;
  /** the scopes asked for (and shown on the consent screen) */
  scope: string[];
  status: DeviceAuthorizationStatus;
  /** the user who answered; null while pending */
  userId: string | null;
  /** JSON of the grant the approving sign-in had (loginMethod, roles, scope, authTime, amr); null unless approved */
  grant: string | null;
  /** seconds the client must wait between polls (RFC 8628 §3.2 `interval`, +5 for each `slow_down`) */
  interval: number;
  /** when the client last polled the token endpoint; null before its first poll */
  lastPolledAt: number | null;
  expiresAt: number;
  /** set once the device code was redeemed for tokens (single use) */
  consumedAt: number | null;
}

/** The OAuth tables: clients, trusted issuers, codes and used assertion `jti`s. */
/** issue 34 §6: an OAuth grant made in a sign-on session (the relying parties logout reaches). */
export interface SessionClientRecord {
  /** the grant's own session (its tokens' `nonce`) */
  sessionId: string;
  /** the sign-on session (the ID token's `sid`) */
  sid: string;
  userId: string;
  clientId: string;
  /** Unix s; the row is dropped after it (the grant's session has expired too) */
  expiresAt: number;
}

export interface OAuthStore {
  createClient(c: ClientRecord): Promise<void>;
  /** replaces the record with the same id */
  updateClient(c: ClientRecord): Promise<void>;
  /** deletes the client and its trusted issuers (behaviour.md §5.8 cascade); false when absent */
  deleteClient(id: string): Promise<boolean>;
  findClient(id: string): Promise<ClientRecord | null>;
  /** created_at desc then id (behaviour.md §10) */
  listClients(page: PageWindow): Promise<PageOf<ClientRecord>>;
  /**
   * issue 34: how many clients were registered through `POST /oauth/register` (a registration token is
   * set), created at or after `since` (Unix s; null: ever) from `ip` (null: any address)
   */
  countRegisteredClients(since: number | null, ip: string | null): Promise<number>;
  createIssuer(t: TrustedIssuerRecord): Promise<void>;
  updateIssuer(t: TrustedIssuerRecord): Promise<void>;
  deleteIssuer(id: string): Promise<boolean>;
  findIssuer(id: string): Promise<TrustedIssuerRecord | null>;
  findIssuerByUrl(issuerUrl: string): Promise<TrustedIssuerRecord | null>;
  listIssuers(serviceAccountId: string | null, page: PageWindow): Promise<PageOf<TrustedIssuerRecord>>;
  saveCode(c: AuthorizationCodeRecord): Promise<void>;
  findCode(codeHash: string): Promise<AuthorizationCodeRecord | null>;
  /** marks the code consumed at `at` if it was not; true only for the call that did it (single use) */
  consumeCode(codeHash: string, at: number): Promise<boolean>;
  /** records the session a redeemed code opened */
  setCodeSession(codeHash: string, sessionId: string): Promise<void>;
  /**
   * Records an assertion's `<issuer>|<jti>` until `expiresAt` (Unix seconds: the last instant the
   * assertion is accepted, its `exp` plus the clock tolerance; RFC 7523 §3 replay); true when it was
   * not recorded yet. Expired entries are pruned (and swept by the retention rule of `authn_used_jtis`).
   */
  useJti(key: string, expiresAt: number, now: number): Promise<boolean>;
  /** issue 34: stores a grant, or refreshes `updatedAt` of the one with the same user, client and scope set; returns the stored row */
  saveConsentGrant(g: ConsentGrantRecord): Promise<ConsentGrantRecord>;
  /** the user's grants, to one client or (null) to all, newest first */
  listConsentGrants(userId: string | null, clientId: string | null, page: PageWindow): Promise<PageOf<ConsentGrantRecord>>;
  findConsentGrant(id: string): Promise<ConsentGrantRecord | null>;
  /** false when absent */
  deleteConsentGrant(id: string): Promise<boolean>;
  /** stores a pending consent page (expired ones are pruned) */
  saveConsentRequest(r: ConsentRequestRecord): Promise<void>;
  /** marks the request answered if it was not and has not expired; the record only for the call that did it (single use) */
  consumeConsentRequest(ticketHash: string, at: number): Promise<ConsentRequestRecord | null>;
  /** issue 34 §6: records that the grant session `sessionId` of `clientId` was made in the sign-on session `sid` of `userId` */
  addSessionClient(r: SessionClientRecord): Promise<void>;
  /**
   * issue 34 §6: removes and returns the grants recorded for the sign-on session `sid`, or (with
   * `userId`) for every sign-on session of the user; expired ones are dropped, not returned; a record
   * is returned to one caller only
   */
  takeSessionClients(by: { sid: string } | { userId: string }, now: number): Promise<SessionClientRecord[]>;
  /** issue 34 §5: stores a new device authorization (ones expired over an hour are pruned) */
  saveDeviceAuthorization(r: DeviceAuthorizationRecord): Promise<void>;
  findDeviceAuthorization(deviceCodeHash: string): Promise<DeviceAuthorizationRecord | null>;
  /** the unexpired request (at `now`) whose user code hashes to `userCodeHash`, or null */
  findDeviceAuthorizationByUserCode(userCodeHash: string, now: number): Promise<DeviceAuthorizationRecord | null>;
  /**
   * Records the user's answer if the request is still pending and unexpired at `at`; true only for the
   * call that did it (a request is answered once)
   */
  answerDeviceAuthorization(deviceCodeHash: string, answer: { status: 'approved' | 'denied'; userId: string; grant: string | null }, at: number): Promise<boolean>;
  /**
   * Records a poll at `at` with the interval now in force, if the last poll recorded is still `seenLastPolledAt`
   * (compare-and-set); false when another poll was recorded in between
   */
  recordDevicePoll(deviceCodeHash: string, seenLastPolledAt: number | null, at: number, interval: number): Promise<boolean>;
  /** marks an approved request redeemed if it was not; true only for the call that did it (single use) */
  consumeDeviceAuthorization(deviceCodeHash: string, at: number): Promise<boolean>;
}
