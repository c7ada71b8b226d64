/**
 * @module orgs/sso/sp-keys
 * The SP key pair of each org SAML connection (issue 31 §1): an RSA-2048 key with a self-signed
 * X.509 certificate (5 years, SHA-256 with RSA, `digitalSignature` and `keyEncipherment`) that signs
 * our AuthnRequests (SAML Bindings §3.4.4.1 `SigAlg`/`Signature`) and decrypts the IdP's
 * `EncryptedAssertion` (SAML Core §2.3.4). The certificate is published in our SP metadata as the
 * `signing` and `encryption` KeyDescriptor (SAML Metadata §2.4.1.1). The private key is sealed
 * AES-256-GCM under the SSO key ring (`--encryption-key`), bound by associated data to the
 * connection (`org_saml_connection:<id>`), re-sealed by the resealer on key rotation, never returned.
 * A connection gets its pair when it is created; one made before SP keys gets it on first use.
 */
import { decrypt, encrypt } from '@gatehouse/crypto';
import { AppError } from '@gatehouse/errors';
import { newSigningCertificate } from '../samlidp/keys.ts';
import type { SsoDeps } from './deps.ts';
import type { SamlConnectionRecord } from './storage/ports.ts';

/** An SP key pair in PEM: the certificate and the opened PKCS#8 private key. */
export interface SpKeyPair { certPem: string; keyPem: string }

const aad = (connectionId: string): string => `org_saml_connection:${connectionId}`;

/**
 * A new SP key pair for connection `connectionId`, its private key sealed.
 * @returns the certificate (PEM) and the sealed private key, for the connection's record
 */
export async function newSpKey(d: Pick<SsoDeps, 'secretKey' | 'now'>, connectionId: string): Promise<{ spCertificate: string; spPrivateKeySealed: string }> {
  const { certPem, keyPem } = await newSigningCertificate(`Gatehouse SAML SP ${connectionId}`, d.now(), true);
  return { spCertificate: certPem, spPrivateKeySealed: encrypt(d.secretKey, keyPem, aad(connectionId)) };
}

/**
 * The connection's SP key pair, creating and storing it when the connection has none (of two
 * concurrent first uses, the one stored first is used by both).
 * @throws AppError `unavailable` when the stored pair cannot be read back
 */
export async function spKeyOf(d: SsoDeps, c: SamlConnectionRecord): Promise<SpKeyPair> {
  let cert = c.spCertificate ?? null;
  let sealed = c.spPrivateKeySealed ?? null;
  if (cert === null || sealed === null) {
    const fresh = await newSpKey(d, c.id);
    if (!(await d.store.saml.setSpKey(c.id, fresh.spCertificate, fresh.spPrivateKeySealed))) {
      const stored = await d.store.saml.byId(c.id);
      if (!stored?.spCertificate || !stored.spPrivateKeySealed) throw new AppError('unavailable', 'the SAML connection key could not be created');
      cert = stored.spCertificate;
      sealed = stored.spPrivateKeySealed;
    } else {
      cert = fresh.spCertificate;
      sealed = fresh.spPrivateKeySealed;
    }
    c.spCertificate = cert;
    c.spPrivateKeySealed = sealed;
  }
  return { certPem: cert, keyPem: decrypt(d.secretKey, sealed, aad(c.id)) };
}
