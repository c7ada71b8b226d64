/**
 * @module @gatehouse/mfa/domain/otp
 * Email/SMS one-time codes (behaviour.md §4.4): 6 characters from an alphabet without look-alikes,
 * stored only as HMAC-SHA-256 keyed by `--encryption-key`, compared trimmed and case-insensitively.
 */
import { randomInt } from 'node:crypto';
import { hmacSha256Hex, keyRing, macHex, matchMac, ringOf, type KeyRing } from '@gatehouse/crypto';

const asRing = (key: string | KeyRing): KeyRing => (typeof key === 'string' ? ringOf(key) : key);

/** behaviour.md §4.4: no 0/O, no I (1 stays) */
export const OTP_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ123456789';
export const OTP_LENGTH = 6;
/** Code lifetime, seconds (behaviour.md §2.1) */
export const OTP_TTL_SECONDS = 300;
/** At most one code per user and channel in this many seconds (behaviour.md §4.4) */
export const OTP_RESEND_INTERVAL_SECONDS = 30;

/** A fresh code: {@link OTP_LENGTH} characters drawn uniformly (crypto.randomInt) from {@link OTP_ALPHABET}. */
export function generateOtp(): string {
  let code = '';
  for (let i = 0; i < OTP_LENGTH; i++) code += OTP_ALPHABET[randomInt(OTP_ALPHABET.length)];
  return code;
}

/**
 * The HMAC keys for codes: the ring of `--encryption-key` (issue 32: the first key MACs new codes,
 * every key verifies), or (when it is not set) a key derived from `--client-secret`, which every
 * process of a deployment shares.
 */
export function otpKey(encryptionKey: string | undefined, clientSecret: string): KeyRing {
  return keyRing(encryptionKey, () => hmacSha256Hex(clientSecret, 'gatehouse/otp/v1'));
}

/**
 * The stored form of a code: lower-case hex HMAC-SHA-256 over `<user id>:<channel>:<CODE>`, so a
 * digest is bound to one user and channel and is never itself an accepted input.
 */
export function otpDigest(key: string | KeyRing, userId: string, channel: string, code: string): string {
  return macHex(asRing(key), `${userId}:${channel}:${code.trim().toUpperCase()}`);
}

/**
 * Constant-time check of a caller's input against a stored digest, under every key of the ring (a code
 * sent just before a key rotation still verifies; codes live {@link OTP_TTL_SECONDS}, so none is re-MACed).
 */
export function otpMatches(key: string | KeyRing, userId: string, channel: string, input: string, storedDigest: string): boolean {
  return matchMac(asRing(key), `${userId}:${channel}:${input.trim().toUpperCase()}`, storedDigest) >= 0;
}
