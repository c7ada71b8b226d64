/**
 * @module orgs/sso/deps
 * What organization SSO is built from (behaviour.md §6.3): its store, the organizations (owned by
 * orgs), the AES-256-GCM key of upstream secrets (`--encryption-key`, libs/crypto), `--url` and the clock.
 */
import type { KeyRing } from '@gatehouse/crypto';
import type { OrgsStore } from '../storage/ports.ts';
import type { SsoStore } from './storage/ports.ts';

export interface SsoDeps {
  store: SsoStore;
  orgs: Pick<OrgsStore, 'organizations' | 'domains'>;
  /** 32 bytes from `deriveEncryptionKey(--encryption-key)` */
  secretKey: Uint8Array | KeyRing;
  /** `--url` without a trailing slash */
  baseUrl: string;
  /** Unix seconds */
  now(): number;
  /**
   * The HTTP client of calls to an org's OIDC IdP (discovery, JWKS, token); absent = the global
   * fetch, which trusts the system CAs and NODE_EXTRA_CA_CERTS. Unit tests pass one trusting their CA.
   */
  idpFetch?: (url: string, init: RequestInit) => Promise<Response>;
}
