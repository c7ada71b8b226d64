/**
 * @module orgs/samlidp/deps
 * What the SAML identity-provider role needs (behaviour.md §5.9): its store, the organizations and
 * memberships (owned by orgs), authn's user rows (typed internal client), the AES-256-GCM key of the
 * private keys at rest (`--encryption-key`), `--url`, the clock and the audit sink.
 */
import type { KeyRing } from '@gatehouse/crypto';
import type { Authenticator } from '@gatehouse/auth';
import type { BusEvents, ProtoServices } from '@gatehouse/contracts';
import type { Logger } from '@gatehouse/observability';
import type { ClientOf } from '@gatehouse/rpc';
import type { OrganizationRecord } from '../storage/ports.ts';
import type { SamlIdpStore } from './storage/ports.ts';

/** The organizations and memberships the IdP relies on (behaviour.md §6.1). */
export interface IdpOrgDirectory {
  get(orgId: string): Promise<OrganizationRecord | null>;
  byName(name: string): Promise<OrganizationRecord | null>;
  isMember(orgId: string, userId: string): Promise<boolean>;
}

export type IdpAuthnClient = Pick<ClientOf<ProtoServices['gatehouse.authn.v1.AuthnInternal']>, 'GetUser' | 'EndCookieSession'>;

export interface SamlIdpDeps {
  store: SamlIdpStore;
  orgs: IdpOrgDirectory;
  /** null: authn is not reachable (split mode without --authn-address): sign-on answers 503 */
  authn: IdpAuthnClient | null;
  authenticator: Authenticator | null;
  /** 32 bytes: the AES-256-GCM key of the sealed private keys (libs/crypto deriveEncryptionKey) */
  sealKey: Uint8Array | KeyRing;
  /** `--url` without a trailing slash */
  baseUrl: string;
  /**
   * records `audit.recorded` (behaviour.md §5.7) of a sign-on, which changes no row: resolves once the row
   * is in orgs' outbox, before the answer (issue 32 §1); never rejects. The admin actions' rows go with
   * their write instead (the store's `events`).
   */
  audit(record: BusEvents['audit.recorded']): Promise<void>;
  logger: Logger;
  /** Unix seconds */
  now(): number;
}
