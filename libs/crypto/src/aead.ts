/**
 * @module @gatehouse/crypto/aead
 * AES-256-GCM (NIST SP 800-38D) for secrets at rest, keyed from `--encryption-key`.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { AppError } from '@gatehouse/errors';
import { isKeyRing, keyRing, type KeyRing } from './keyring.ts';

const VERSION = 'v1';
/** sealed under a ring: `v2.<key id>.<base64url(iv ‖ ciphertext ‖ tag)>` (issue 32) */
const RING_VERSION = 'v2';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Derives the 256-bit AES key from the `--encryption-key` flag value:
 * HKDF-SHA-256 (RFC 5869) with IKM = the flag's UTF-8 bytes, salt = `gatehouse`, info =
 * `gatehouse aes-256-gcm v1`, L = 32. Any string length is accepted; use ≥ 32 random characters.
 *
 * @throws AppError `invalid_argument` when the flag value is empty
 */
export function deriveEncryptionKey(encryptionKey: string): Buffer {
  if (typeof encryptionKey !== 'string' || encryptionKey.length === 0) {
    throw new AppError('invalid_argument', '--encryption-key must not be empty');
  }
  return Buffer.from(hkdfSync('sha256', Buffer.from(encryptionKey, 'utf8'), 'gatehouse', 'gatehouse aes-256-gcm v1', 32));
}

function sealWith(key: Uint8Array, plaintext: string, aad: string | undefined): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  if (aad !== undefined) cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
}

function openWith(key: Uint8Array, payload: string, aad: string | undefined): string {
  const raw = Buffer.from(payload, 'base64url');
  if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('too short');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
  if (aad !== undefined) decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
  return Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString('utf8');
}

/**
 * Encrypts UTF-8 text with AES-256-GCM, a random 96-bit IV (SP 800-38D §8.2.2) and a 128-bit tag.
 * Under a bare key the output is `v1.<base64url(iv ‖ ciphertext ‖ tag)>`; under a {@link KeyRing} it
 * is sealed with the ring's first key and names it: `v2.<key id>.<base64url(…)>` (issue 32).
 *
 * @param key 32 bytes from {@link deriveEncryptionKey}, or a key ring
 * @param aad optional associated data (for example the record id) that must match on decrypt
 */
export function encrypt(key: Uint8Array | KeyRing, plaintext: string, aad?: string): string {
  if (!isKeyRing(key)) return `${VERSION}.${sealWith(key, plaintext, aad)}`;
  const current = key.keys[0];
  return `${RING_VERSION}.${current.id}.${sealWith(current.aes, plaintext, aad)}`;
}

/**
 * Decrypts the output of {@link encrypt}. Under a ring, a `v2` value opens with the key it names and
 * a `v1` value (sealed before rings, or under a bare key) with whichever key of the ring opens it.
 * @throws AppError `internal` (reason `decrypt_failed`) on a wrong or unknown key, wrong AAD, tampering or bad format
 */
export function decrypt(key: Uint8Array | KeyRing, sealed: string, aad?: string): string {
  try {
    const parts = sealed.split('.');
    if (parts[0] === VERSION && parts.length === 2) {
      const candidates = isKeyRing(key) ? key.keys.map((k) => k.aes) : [key];
      for (const [i, k] of candidates.entries()) {
        try {
          return openWith(k, parts[1]!, aad);
        } catch (err) {
          if (i === candidates.length - 1) throw err;
        }
      }
    }
    if (parts[0] === RING_VERSION && parts.length === 3) {
      const k = isKeyRing(key) ? key.keys.find((r) => r.id === parts[1])?.aes : key;
      if (!k) throw new Error('sealed under a key that is not in the ring');
      return openWith(k, parts[2]!, aad);
    }
    throw new Error('unknown format');
  } catch (err) {
    throw new AppError('internal', 'internal error', { cause: err, reason: 'decrypt_failed' });
  }
}

/** True when `sealed` is not sealed under the ring's first key (a `v1` value, or another key's `v2`). */
export function needsReseal(ring: KeyRing, sealed: string): boolean {
  return !sealed.startsWith(`${RING_VERSION}.${ring.keys[0].id}.`);
}

/**
 * Re-seals `sealed` under the ring's first key (issue 32): null when it already is.
 * @throws AppError `internal` (reason `decrypt_failed`) when no key of the ring opens it
 */
export function reseal(ring: KeyRing, sealed: string, aad?: string): string | null {
  if (!needsReseal(ring, sealed)) return null;
  return encrypt(ring, decrypt(ring, sealed, aad), aad);
}

/**
 * The key ring that seals the secrets of delivery jobs (`email.send` links and codes, `sms.send`
 * codes) from the producer's outbox until the notifications worker renders the message (issue 23).
 * It is the ring of `--encryption-key` ({@link keyRing}), or, when that flag is not set, the one key
 * derived from HMAC-SHA-256(`--client-secret`, `gatehouse/jobs/v1`): every process of a deployment
 * is given the same flags, so producers and the worker hold the same ring in all-in-one and split mode.
 *
 * @returns the ring for {@link sealJobSecret} / {@link openJobSecret}
 * @throws AppError `invalid_argument` when both values are empty
 */
export function jobSealKey(encryptionKey: string | undefined, clientSecret: string): KeyRing {
  if (!encryptionKey?.trim() && !clientSecret) throw new AppError('invalid_argument', '--encryption-key or --client-secret is required to seal delivery jobs');
  return keyRing(encryptionKey, () => createHmac('sha256', clientSecret).update('gatehouse/jobs/v1').digest('hex'));
}

/**
 * Seals one job secret with AES-256-GCM ({@link encrypt}), bound by its associated data to the job
 * kind and recipient (`<job>:<to>`), so a sealed value moved into another job or to another
 * recipient fails to open.
 *
 * @param job the envelope name, `email.send` or `sms.send`
 * @param to the recipient address or phone number, exactly as the job carries it
 */
export function sealJobSecret(key: Uint8Array | KeyRing, job: string, to: string, plaintext: string): string {
  return encrypt(key, plaintext, jobSecretAad(job, to));
}

/**
 * The fields of a delivery job's `data` that hold {@link sealJobSecret} values, per job (envelope name):
 * what re-sealing finds in the outboxes (issue 32 §2).
 */
export const SEALED_JOB_FIELDS: Readonly<Record<string, readonly string[]>> = {
  'email.send': ['sealed_variables'],
  'sms.send': ['sealed_otp'],
};

/** The associated data {@link sealJobSecret} binds a job secret to: `<job>:<to>`. */
export function jobSecretAad(job: string, to: string): string {
  return `${job}:${to}`;
}

/**
 * Opens a value of {@link sealJobSecret} for the same `job` and `to`.
 * @throws AppError `internal` (reason `decrypt_failed`) on a wrong key, recipient or job, or tampering
 */
export function openJobSecret(key: Uint8Array | KeyRing, job: string, to: string, sealed: string): string {
  return decrypt(key, sealed, jobSecretAad(job, to));
}
