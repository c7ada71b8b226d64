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
}
