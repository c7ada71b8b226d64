/**
 * @module orgs/samlidp/keys
 * The IdP's signing keys (behaviour.md §5.9): `rotate_saml_idp_cert` makes a new RSA-2048 key with a
 * self-signed X.509 certificate valid 5 years (SHA-256 with RSA, node-forge) as `current`, and the
 * previous `current` becomes `active` (still published in the metadata); `retire_saml_idp_key` ends
 * an `active` key's publication.
 *
 * Issue 31, rotation without breaking SPs that pin the certificate they were given: `stage: true`
 * makes the new key `pending`, published in the metadata next to the current one (SAML Metadata
 * §2.4.1.1: several signing KeyDescriptors) while the current key keeps signing; SPs refresh their
 * metadata or add the new certificate; the next `rotate_saml_idp_cert` without `stage` is the switch
 * (the pending key becomes `current`, the old one `active`, still trusted); `retire_saml_idp_key`
 * then ends the old key. A pending key can be retired too (the rotation is abandoned). An org with no key gets one lazily on its first metadata or
 * assertion. The private key is AES-256-GCM sealed (libs/crypto, AAD = the key id) and never returned.
 */
import { generateKeyPair, randomBytes, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { decrypt, encrypt } from '@gatehouse/crypto';
import { AppError } from '@gatehouse/errors';
import type { SamlIdpDeps } from './deps.ts';
import { existingOrg } from './providers.ts';
import { noEvents as none, type EventsOf } from '../storage/ports.ts';
import type { IdpKeyRecord } from './storage/ports.ts';

export const KEY_RETIRED = 'signing key retired';
export const KEY_ALREADY_RETIRED = 'signing key already retired';
export const KEY_IS_CURRENT = 'cannot retire the current signing key; rotate to a new key first';
export const KEY_NOT_FOUND = 'signing key not found';

/** the certificate's lifetime (behaviour.md §5.9): 5 years */
export const CERT_YEARS = 5;

const generate = promisify(generateKeyPair);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * A new RSA-2048 key pair and its self-signed certificate (subject and issuer `CN=<cn>`, serial 16
 * random bytes, valid from `now` for 5 years, SHA-256 with RSA). Key generation runs off the event loop.
 * @param now Unix seconds
 * @param encipherment true: the key also decrypts (RFC 5280 §4.2.1.3 `keyEncipherment`, an SP's
 *   encryption key of SAML Metadata §2.4.1.1)
 * @returns PEM texts: the certificate and the PKCS#8 private key
 */
export async function newSigningCertificate(cn: string, now: number, encipherment = false): Promise<{ certPem: string; keyPem: string }> {
  const { publicKey, privateKey } = await generate('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  // node-forge loads with the first key, not at start-up (issue 22 §3)
  const { default: forge } = await import('node-forge');
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey);
  // a positive serial (RFC 5280 §4.1.2.2): the high bit cleared
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f;
  cert.serialNumber = serial.toString('hex');
  cert.validity.notBefore = new Date(now * 1000);
  const notAfter = new Date(now * 1000);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + CERT_YEARS);
  cert.validity.notAfter = notAfter;
  const attrs = [{ name: 'commonName', value: cn }, { name: 'organizationName', value: 'Gatehouse' }];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.setExtensions([{ name: 'basicConstraints', cA: false }, { name: 'keyUsage', digitalSignature: true, nonRepudiation: true, keyEncipherment: encipherment }]);
  cert.sign(forge.pki.privateKeyFromPem(privateKey), forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert).trim(), keyPem: privateKey };
}

async function newKey(d: SamlIdpDeps, orgId: string, status: 'current' | 'pending' = 'current'): Promise<IdpKeyRecord> {
  const now = d.now();
  const id = randomUUID();
  const { certPem, keyPem } = await newSigningCertificate(`Gatehouse SAML IdP ${orgId}`, now);
  return { id, orgId, certPem, privateKeySealed: encrypt(d.sealKey, keyPem, id), algorithm: 'RS256', status, createdAt: now, updatedAt: now };
}

/**
 * `rotate_saml_idp_cert` → the key that changed: with `stage`, a new `pending` key (replacing an earlier
 * pending one); without it, the pending key switched to `current` when there is one, else a new
 * `current` key. `events` are stored with the change.
 * @throws AppError `invalid_argument`; `not_found` `organization not found`
 */
export async function rotateKey(d: SamlIdpDeps, rawOrgId: string | null | undefined, events: EventsOf<IdpKeyRecord> = none, stage = false): Promise<IdpKeyRecord> {
  const orgId = await existingOrg(d, rawOrgId);
  if (stage) {
    // the org's first key (lazy) is the current one the pending key will replace
    await publishedKeys(d, orgId);
    const key = await newKey(d, orgId, 'pending');
    await d.store.keys.stage(key, key.createdAt, events(key));
    return key;
  }
  const switched = await d.store.keys.promote(orgId, d.now(), events);
  if (switched) return switched;
  const key = await newKey(d, orgId);
  await d.store.keys.rotate(key, key.createdAt, false, events(key));
  return key;
}

/** `saml_idp_keys` → every key of the org (retired ones included), newest first. */
export async function listKeys(d: SamlIdpDeps, rawOrgId: string | null | undefined): Promise<IdpKeyRecord[]> {
  return d.store.keys.list(await existingOrg(d, rawOrgId));
}

/**
 * `retire_saml_idp_key` → the §5.9 message; `events` are stored with the status change (only when the key was active).
 * @throws AppError `failed_precondition` for the current key; `not_found` `signing key not found`
 */
export async function retireKey(d: SamlIdpDeps, rawId: string | null | undefined, events: EventsOf<IdpKeyRecord> = none): Promise<{ message: string; key: IdpKeyRecord }> {
  const id = (rawId ?? '').trim().toLowerCase();
  if (!id) throw new AppError('invalid_argument', 'id is required');
  const key = UUID.test(id) ? await d.store.keys.get(id) : null;
  if (!key) throw new AppError('not_found', KEY_NOT_FOUND);
  const was = await d.store.keys.retire(id, d.now(), events(key));
  if (was === null) throw new AppError('not_found', KEY_NOT_FOUND);
  if (was === 'current') throw new AppError('failed_precondition', KEY_IS_CURRENT);
  return { message: was === 'retired' ? KEY_ALREADY_RETIRED : KEY_RETIRED, key };
}

/** A key that signs: the certificate and the opened private key (PKCS#8 PEM). */
export interface SigningKey {
  id: string;
  certPem: string;
  keyPem: string;
}

/**
 * The org's published keys (current first, then the pending one, then active ones, newest first) and its signing key,
 * creating the first key when the org has none (behaviour.md §5.9, lazily on first metadata or assertion).
 */
export async function publishedKeys(d: SamlIdpDeps, orgId: string): Promise<{ signing: SigningKey; published: IdpKeyRecord[] }> {
  let keys = (await d.store.keys.list(orgId)).filter((k) => k.status !== 'retired');
  if (!keys.some((k) => k.status === 'current')) {
    const first = await newKey(d, orgId);
    // the store skips the write when a current key appeared since the read above
    await d.store.keys.rotate(first, first.createdAt, true);
    keys = (await d.store.keys.list(orgId)).filter((k) => k.status !== 'retired');
  }
  const current = keys.find((k) => k.status === 'current');
  if (!current) throw new AppError('unavailable', 'the signing key could not be created');
  const published = [current, ...keys.filter((k) => k.status === 'pending'), ...keys.filter((k) => k.status === 'active')];
  return { signing: { id: current.id, certPem: current.certPem, keyPem: decrypt(d.sealKey, current.privateKeySealed, current.id) }, published };
}

/** The wire SAMLIDPKey (graphql.md §3.1): never the private key. */
export const keyWire = (k: IdpKeyRecord) => ({
  id: k.id, org_id: k.orgId, cert_pem: k.certPem, algorithm: k.algorithm, status: k.status, created_at: k.createdAt, updated_at: k.updatedAt,
});
