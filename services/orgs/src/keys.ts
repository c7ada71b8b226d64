/**
 * @module orgs/keys
 * orgs' key rings (issue 32) and the columns they seal: SCIM token digests (HMAC, re-made on use),
 * SSO connections' upstream client secrets, SAML connections' SP private keys and the SAML IdP's private keys (AES-256-GCM, re-sealed by
 * the resealer). Each ring is `--encryption-key`'s (the first key seals, every key opens), or, when
 * that flag is not set, one key derived from `--client-secret` per purpose.
 */
import type { Config } from '@gatehouse/config';
import { hmacSha256Hex, keyRing, type KeyRing } from '@gatehouse/crypto';
import type { SealedColumn } from '@gatehouse/db';

export interface OrgsKeys {
  /** HMAC keys of SCIM token digests */
  scim: KeyRing;
  /** seals SSO connections' upstream client secrets and SAML connections' SP private keys */
  sso: KeyRing;
  /** seals the SAML IdP's private keys */
  samlIdp: KeyRing;
}

/** The rings of `config` (the fallback labels are those the single keys were derived with before rings). */
export function orgsKeys(config: Pick<Config, 'encryptionKey' | 'clientSecret'>): OrgsKeys {
  const derived = (label: string) => (): string => hmacSha256Hex(config.clientSecret ?? '', label);
  return {
    scim: keyRing(config.encryptionKey, derived('gatehouse/scim-token-key/v1')),
    sso: keyRing(config.encryptionKey, derived('gatehouse/sso-secret-key/v1')),
    samlIdp: keyRing(config.encryptionKey, derived('gatehouse/saml-idp-key/v1')),
  };
}

/** The sealed columns of orgs' tables, with the associated data each was sealed with. */
export function orgsSealedColumns(keys: OrgsKeys): SealedColumn[] {
  return [
    // sso/connections.ts: AAD `org_oidc_connection:<id>`
    { table: 'orgs_oidc_connections', key: 'id', column: 'client_secret_sealed', ring: keys.sso, aad: (row) => `org_oidc_connection:${String(row.id)}` },
    // sso/sp-keys.ts: AAD `org_saml_connection:<id>`
    { table: 'orgs_saml_connections', key: 'id', column: 'sp_private_key_sealed', ring: keys.sso, aad: (row) => `org_saml_connection:${String(row.id)}` },
    // the staged and the previous SP key of an in-place rotation, sealed as the current one
    { table: 'orgs_saml_connections', key: 'id', column: 'sp_next_private_key_sealed', ring: keys.sso, aad: (row) => `org_saml_connection:${String(row.id)}` },
    { table: 'orgs_saml_connections', key: 'id', column: 'sp_previous_private_key_sealed', ring: keys.sso, aad: (row) => `org_saml_connection:${String(row.id)}` },
    // samlidp/keys.ts: AAD the key id
    { table: 'orgs_saml_idp_keys', key: 'id', column: 'private_key_sealed', ring: keys.samlIdp, aad: (row) => String(row.id) },
  ];
}
