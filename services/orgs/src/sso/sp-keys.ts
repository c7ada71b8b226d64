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
 *
 * Rotation in place (`rotate_org_saml_sp_key`), so the IdP never holds a certificate we stopped using:
 * 1. `stage`: a new pair is made and published in the metadata beside the current one (signing and
 *    encryption KeyDescriptors for both); it already decrypts, nothing is signed with it yet. The IdP
 *    reloads our metadata (or is given the new certificate).
 * 2. `activate`: the new pair signs our AuthnRequests and LogoutRequests; the old one stays published and
 *    keeps decrypting assertions the IdP still encrypts to it.
 * 3. `retire`: the old pair is dropped from the metadata and no longer decrypts.
 * Between steps 1 and 3 an assertion encrypted to either certificate is decrypted.
 */
import { decrypt, encrypt } from '@gatehouse/crypto';
import { AppError } from '@gatehouse/errors';
import { newSigningCertificate } from '../samlidp/keys.ts';
import type { SsoDeps } from './deps.ts';
import type { OutboxEvent } from '../storage/ports.ts';
import type { SamlConnectionRecord, SpKeyStep } from './storage/ports.ts';

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

/** The connection's SP key pairs: `current` signs and decrypts; `others` (staged, then previous) only decrypt and are published. */
export interface SpKeySet {
  current: SpKeyPair;
  others: SpKeyPair[];
}

/**
 * The connection's current SP key pair ({@link spKeyOf}) and the staged and previous pairs of a rotation in
 * place (module doc), opened.
 * @throws AppError `unavailable` when the current pair cannot be created
 */
export async function spKeySetOf(d: SsoDeps, c: SamlConnectionRecord): Promise<SpKeySet> {
  const current = await spKeyOf(d, c);
  const others: SpKeyPair[] = [];
  for (const [certPem, sealed] of [[c.spNextCertificate, c.spNextPrivateKeySealed], [c.spPreviousCertificate, c.spPreviousPrivateKeySealed]] as const) {
    if (certPem && sealed) others.push({ certPem, keyPem: decrypt(d.secretKey, sealed, aad(c.id)) });
  }
  return { current, others };
}

/** What each step refuses when it does not apply. */
export const SP_KEY_STEP_REFUSED: Record<SpKeyStep, string> = {
  stage: 'a new SP key is already staged, or the previous one is not retired yet',
  activate: 'no new SP key is staged',
  retire: 'there is no previous SP key to retire',
};

/**
 * One step of the SP key rotation in place (module doc) on connection `c`.
 * @throws AppError `invalid_argument` for an unknown step; `failed_precondition` ({@link SP_KEY_STEP_REFUSED})
 *   when the step does not apply to the connection's keys now
 */
export async function rotateSpKey(d: SsoDeps, c: SamlConnectionRecord, step: string, events: readonly OutboxEvent[] = []): Promise<void> {
  if (step !== 'stage' && step !== 'activate' && step !== 'retire') throw new AppError('invalid_argument', 'step must be stage, activate or retire');
  // a connection made before SP keys gets its current pair first
  await spKeyOf(d, c);
  let fresh: { certPem: string; privateKeySealed: string } | undefined;
  if (step === 'stage') {
    const made = await newSpKey(d, c.id);
    fresh = { certPem: made.spCertificate, privateKeySealed: made.spPrivateKeySealed };
  }
  if (!(await d.store.saml.rotateSpKey(c.id, step, fresh, events))) throw new AppError('failed_precondition', SP_KEY_STEP_REFUSED[step]);
}
