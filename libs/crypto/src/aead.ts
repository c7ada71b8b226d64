/**
 * @module @gatehouse/crypto/aead
 * AES-256-GCM (NIST SP 800-38D) for secrets at rest, keyed from `--encryption-key`.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
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
