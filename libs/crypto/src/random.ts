/**
 * @module @gatehouse/crypto/random
 * Random opaque tokens, digests, HMAC, constant-time comparison and the OIDC `at_hash`.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * A random opaque token, base64url without padding (RFC 4648 §5).
 * @param bytes entropy in bytes (default 32 = 256 bits)
 */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** SHA-256 of the UTF-8 input, lower-case hex (64 chars). */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** HMAC-SHA-256 (RFC 2104) of `data` under `key`, lower-case hex. */
export function hmacSha256Hex(key: string | Uint8Array, data: string | Uint8Array): string {
  return createHmac('sha256', key).update(data).digest('hex');
}

/**
 * Constant-time string equality. Both sides are hashed to a fixed 32 bytes first, so neither the
 * content nor the length of `expected` leaks through timing.
 */
export function timingSafeEqualString(actual: string, expected: string): boolean {
  if (typeof actual !== 'string' || typeof expected !== 'string') return false;
  const a = createHash('sha256').update(actual, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b) && actual.length === expected.length;
}

/** Hash function of a JWS alg's SHA-2 size (RFC 7518 §3.1). */
export function hashOfAlg(alg: string): 'sha256' | 'sha384' | 'sha512' {
  const bits = alg.slice(-3);
  if (bits === '384') return 'sha384';
  if (bits === '512') return 'sha512';
  return 'sha256';
}

/**
 * `at_hash` (OIDC Core 1.0 §3.1.3.6): the base64url of the left-most half of the hash of the
 * ASCII access token, the hash being the one of the ID token's JWS `alg`.
 */
export function atHash(accessToken: string, alg: string): string {
  const digest = createHash(hashOfAlg(alg)).update(accessToken, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}
