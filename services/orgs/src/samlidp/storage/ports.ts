/**
 * @module orgs/samlidp/storage/ports
 * What the SAML identity-provider role stores (behaviour.md §5.9). Times are Unix seconds.
 */
import type { PageOf, PageWindow } from '@gatehouse/contracts/pagination';

/** A registered service provider. `entityId` is unique within its org. */
export interface ServiceProviderRecord {
  id: string;
  orgId: string;
  name: string;
  entityId: string;
  acsUrl: string;
  spCertPem: string | null;
  nameIdFormat: string;
  /** a JSON object of strings (user field → SAML attribute name), as given */
  mappedAttributes: string | null;
  allowIdpInitiated: boolean;
  isActive: boolean;
  createdAt: number;
  updatedAt: number;
}

export type IdpKeyStatus = 'current' | 'active' | 'retired';

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

export interface SamlIdpStore {
  providers: {
    /** false (nothing written) when the org already has a provider with this entity id */
    insert(sp: ServiceProviderRecord): Promise<boolean>;
    /** replaces the row; `conflict` when another provider of the org has the new entity id */
    update(sp: ServiceProviderRecord): Promise<'updated' | 'missing' | 'conflict'>;
    /** false when there was no such provider */
    delete(id: string): Promise<boolean>;
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
    rotate(key: IdpKeyRecord, at: number, onlyIfNone?: boolean): Promise<boolean>;
    /** sets the key's status to `retired` unless it is `current`; the status it had, or null when missing */
    retire(id: string, at: number): Promise<IdpKeyStatus | null>;
  };
}
