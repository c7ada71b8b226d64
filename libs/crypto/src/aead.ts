/**
 * @module @gatehouse/crypto/aead
 * AES-256-GCM (NIST SP 800-38D) for secrets at rest, keyed from `--encryption-key`.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { AppError } from '@gatehouse/errors';

const VERSION = 'v1';
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

/**
 * Encrypts UTF-8 text. Output: `v1.<base64url(iv ‖ ciphertext ‖ tag)>` with a random 96-bit IV
 * (SP 800-38D §8.2.2) and a 128-bit tag.
 *
 * @param key 32 bytes from {@link deriveEncryptionKey}
 * @param aad optional associated data (for example the record id) that must match on decrypt
 */
export function encrypt(key: Uint8Array, plaintext: string, aad?: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  if (aad !== undefined) cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')}`;
}

/**
 * Decrypts the output of {@link encrypt}.
 * @throws AppError `internal` (reason `decrypt_failed`) on a wrong key, wrong AAD, tampering or bad format
 */
export function decrypt(key: Uint8Array, sealed: string, aad?: string): string {
  try {
    const [version, payload] = sealed.split('.');
    if (version !== VERSION || payload === undefined) throw new Error('unknown format');
    const raw = Buffer.from(payload, 'base64url');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('too short');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
    if (aad !== undefined) decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch (err) {
    throw new AppError('internal', 'internal error', { cause: err, reason: 'decrypt_failed' });
  }
}

/**
 * The AES-256 key that seals the secrets of delivery jobs (`email.send` links and codes, `sms.send`
 * codes) from the producer's outbox until the notifications worker renders the message (issue 23).
 * It is {@link deriveEncryptionKey} of `--encryption-key`, or, when that flag is not set, of
 * HMAC-SHA-256(`--client-secret`, `gatehouse/jobs/v1`): every process of a deployment is given the
 * same flags, so producers and the worker derive the same key in all-in-one and split mode.
 *
 * @returns 32 bytes for {@link sealJobSecret} / {@link openJobSecret}
 * @throws AppError `invalid_argument` when both values are empty
 */
export function jobSealKey(encryptionKey: string | undefined, clientSecret: string): Buffer {
  if (encryptionKey) return deriveEncryptionKey(encryptionKey);
  if (!clientSecret) throw new AppError('invalid_argument', '--encryption-key or --client-secret is required to seal delivery jobs');
  return deriveEncryptionKey(createHmac('sha256', clientSecret).update('gatehouse/jobs/v1').digest('hex'));
}

/**
 * Seals one job secret with AES-256-GCM ({@link encrypt}), bound by its associated data to the job
 * kind and recipient (`<job>:<to>`), so a sealed value moved into another job or to another
 * recipient fails to open.
 *
 * @param job the envelope name, `email.send` or `sms.send`
 * @param to the recipient address or phone number, exactly as the job carries it
 */
export function sealJobSecret(key: Uint8Array, job: string, to: string, plaintext: string): string {
  return encrypt(key, plaintext, `${job}:${to}`);
}

/**
 * Opens a value of {@link sealJobSecret} for the same `job` and `to`.
 * @throws AppError `internal` (reason `decrypt_failed`) on a wrong key, recipient or job, or tampering
 */
export function openJobSecret(key: Uint8Array, job: string, to: string, sealed: string): string {
  return decrypt(key, sealed, `${job}:${to}`);
}
