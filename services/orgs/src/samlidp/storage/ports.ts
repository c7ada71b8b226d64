/**
 * @module orgs/samlidp/storage/ports
 * What the SAML identity-provider role stores (behaviour.md §5.9). Times are Unix seconds.
 */
import type { PageOf, PageWindow } from '@gatehouse/contracts/pagination';
import type { OutboxEvent } from '../../storage/ports.ts';

/** A registered service provider. `entityId` is unique within its org. */
export interface ServiceProviderRecord {
  id: string;
  orgId: string;
  name: string;
  entityId: string;
  acsUrl: string;
  /** the SP's signing certificate: with one, its AuthnRequests and LogoutRequests must be signed by it */
  spCertPem: string | null;
  /** issue 31: the SP's encryption certificate: with one, assertions to it are encrypted */
  spEncryptionCertPem: string | null;
  /** issue 31: the SP's SingleLogoutService URL; without one the IdP refuses its LogoutRequests */
  sloUrl: string | null;
  nameIdFormat: string;
  /** a JSON object of strings (user field → SAML attribute name), as given */
  mappedAttributes: string | null;
  allowIdpInitiated: boolean;
  isActive: boolean;
  createdAt: number;
  updatedAt: number;
}

/**
 * `pending` (issue 31: published in the metadata, not yet signing), `current` (signs), `active`
 * (a former current key, still published), `retired` (no longer published).
 */
export type IdpKeyStatus = 'pending' | 'current' | 'active' | 'retired';

/** An IdP signing key; `privateKeySealed` is AES-256-GCM ciphertext and never leaves the service. */
export interface IdpKeyRecord {
  id: string;
  orgId: string;
  certPem: string;
  privateKeySealed: string;
  algorithm: 'RS256';
  status: IdpKeyStatus;
  createdAt: number;
  updatedAt: number;
}

/**
 * Issue 31: one session participant (SAML Profiles §4.4.1): a service provider an assertion was issued to
 * in one Gatehouse browser session, with the NameID and SessionIndex of that assertion (the latest one
 * when the SP asked again). Single Logout names it in the LogoutRequest it sends that SP.
 */
export interface SessionParticipantRecord {
  orgId: string;
  /** the Gatehouse sign-on session (its `sid`, else its id) */
  sessionId: string;
  spId: string;
  nameId: string;
  nameIdFormat: string;
  sessionIndex: string;
  /** Unix s of the assertion */
  issuedAt: number;
  /** Unix s: the session's expiry, after which the row is dropped (the retention sweep) and never read */
  expiresAt: number;
}

/**
 * Issue 31: a Single Logout on its way through the browser (SAML Profiles §4.4.3.4), waiting for the
 * LogoutResponse of the SP it sent a LogoutRequest to. Single use.
 */
export interface PendingLogoutRecord {
  /** the ID of the LogoutRequest sent (the awaited LogoutResponse's `InResponseTo`) */
  requestId: string;
  orgId: string;
  /** the chain's state (JSON: the initiator, the SP awaited, the SPs still to visit, partial or not) */
  data: string;
  /** Unix s */
  expiresAt: number;
}

/**
 * Every write takes `events` (its `saml.*` audit row, issue 32 §1): they go to orgs' outbox in the same
 * transaction as the write, and only when the write changed something (nothing is written otherwise).
 */
export interface SamlIdpStore {
  providers: {
    /** false (nothing written) when the org already has a provider with this entity id */
    insert(sp: ServiceProviderRecord, events?: readonly OutboxEvent[]): Promise<boolean>;
    /** replaces the row; `conflict` when another provider of the org has the new entity id */
    update(sp: ServiceProviderRecord, events?: readonly OutboxEvent[]): Promise<'updated' | 'missing' | 'conflict'>;
    /** false when there was no such provider */
    delete(id: string, events?: readonly OutboxEvent[]): Promise<boolean>;
    get(id: string): Promise<ServiceProviderRecord | null>;
    byEntityId(orgId: string, entityId: string): Promise<ServiceProviderRecord | null>;
    /** newest first (created_at desc, then id) */
    list(orgId: string, page: PageWindow): Promise<PageOf<ServiceProviderRecord>>;
  };
  keys: {
    get(id: string): Promise<IdpKeyRecord | null>;
    /** every key of the org, newest first */
    list(orgId: string): Promise<IdpKeyRecord[]>;
    /**
     * In one transaction: the org's `current` key becomes `active` (at `at`), then `key` is inserted
     * as `current`. With `onlyIfNone`, nothing is written when the org already has a current key
     * (the lazy first key), and false is returned.
     */
    rotate(key: IdpKeyRecord, at: number, onlyIfNone?: boolean, events?: readonly OutboxEvent[]): Promise<boolean>;
    /**
     * Issue 31: stores `key` as `pending` (published, not signing), in place of a pending key the org
     * already had (that one becomes `retired`), in one transaction.
     */
    stage(key: IdpKeyRecord, at: number, events?: readonly OutboxEvent[]): Promise<void>;
    /**
     * Issue 31, the switch: in one transaction the org's pending key becomes `current` and the current
     * one `active`; `events` are written only then. null when the org has no pending key.
     */
    promote(orgId: string, at: number, events?: (key: IdpKeyRecord) => readonly OutboxEvent[]): Promise<IdpKeyRecord | null>;
    /**
     * sets the key's status to `retired` when it is `active` or `pending` (`events` are written only then); the status
     * it had, or null when missing
     */
    retire(id: string, at: number, events?: readonly OutboxEvent[]): Promise<IdpKeyStatus | null>;
  };
  /** issue 31: the session participants (one row per session and SP; the latest assertion's values) */
  participants: {
    /** stores `p` in place of the row of the same session and SP, if any */
    record(p: SessionParticipantRecord): Promise<void>;
    /** removes every row of the session in the org and returns those not expired at `now`, oldest first */
    take(orgId: string, sessionId: string, now: number): Promise<SessionParticipantRecord[]>;
  };
  /** issue 31: Single Logouts waiting for an SP's LogoutResponse */
  logouts: {
    put(p: PendingLogoutRecord): Promise<void>;
    /** removes and returns it; null when unknown, already taken (by any replica) or expired at `now` */
    take(requestId: string, now: number): Promise<PendingLogoutRecord | null>;
  };
}
