/**
 * @module @gatehouse/crypto/keyring
 * Key rings for secrets at rest (issue 32): `--encryption-key` names one or more keys, comma-separated
 * (or the flag repeated). The first key seals and MACs; every key opens and verifies, so a deployment
 * can put a new key first, re-seal what the old one sealed (`gatehouse reseal`, or the services'
 * background resealer), and then drop the old key.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '@gatehouse/errors';
import { deriveEncryptionKey } from './aead.ts';

/** One key of a ring: the flag's text (the HMAC key), its AES-256 key and its public id. */
export interface RingKey {
  /** the key as written in the flag (or the derived fallback), used as-is as an HMAC-SHA-256 key */
  readonly secret: string;
  /** the AES-256-GCM key, {@link deriveEncryptionKey} of `secret` */
  readonly aes: Buffer;
  /**
   * 11 base64url characters naming the key in sealed values (`v2.<id>.<…>`): the first 64 bits of
   * HMAC-SHA-256(aes, `gatehouse key id v1`), so the id reveals nothing of the key
   */
  readonly id: string;
}

/** Keys in order: `keys[0]` seals and MACs; all of them open and verify. */
export interface KeyRing {
  readonly keys: readonly [RingKey, ...RingKey[]];
}

/** Builds a {@link RingKey} from one key text. */
function ringKey(secret: string): RingKey {
  const aes = deriveEncryptionKey(secret);
  const id = createHmac('sha256', aes).update('gatehouse key id v1').digest().subarray(0, 8).toString('base64url');
  return { secret, aes, id };
}

/**
 * The key texts of an `--encryption-key` value: comma-separated, each trimmed, empty entries dropped,
 * duplicates kept once (first position wins).
 */
export function keyTexts(flag: string | undefined): string[] {
  return [...new Set((flag ?? '').split(',').map((k) => k.trim()).filter((k) => k !== ''))];
}

/**
 * The ring of an `--encryption-key` value, or, when it names no key, the one-key ring of `fallback`
 * (the key a service derives from `--client-secret` for that purpose; the historic single-key
 * derivations are unchanged, so values sealed before rings existed still open).
 *
 * @param flag the flag's value: `k1` or `k1,k2,...` (the first seals)
 * @param fallback the key text used when `flag` names no key
 * @throws AppError `invalid_argument` when neither names a key
 */
export function keyRing(flag: string | undefined, fallback: string | (() => string)): KeyRing {
  const texts = keyTexts(flag);
  if (texts.length === 0) {
    const only = typeof fallback === 'function' ? fallback() : fallback;
    if (!only) throw new AppError('invalid_argument', '--encryption-key or --client-secret is required');
    return { keys: [ringKey(only)] };
  }
  const [first, ...rest] = texts.map(ringKey);
  return { keys: [first!, ...rest] };
}

/** A ring of exactly the given key texts (tests, and callers holding raw keys). */
export function ringOf(...texts: [string, ...string[]]): KeyRing {
  const [first, ...rest] = texts.map(ringKey);
  return { keys: [first!, ...rest] };
}

/** True when `value` is a ring rather than a bare AES key. */
export function isKeyRing(value: Uint8Array | KeyRing): value is KeyRing {
  return !(value instanceof Uint8Array) && Array.isArray((value as KeyRing).keys);
}

/** HMAC-SHA-256 hex of `data` under the ring's first key (what new digests are made with). */
export function macHex(ring: KeyRing, data: string): string {
  return createHmac('sha256', ring.keys[0].secret).update(data).digest('hex');
}

/**
 * The position in the ring of the key whose HMAC-SHA-256 hex of `data`, passed through `format`,
 * equals `stored` (constant-time per comparison), or -1. Position 0 is the current key; a match at
 * a later position means the stored digest should be re-made with {@link macHex} (re-MAC on use).
 */
export function matchMac(ring: KeyRing, data: string, stored: string, format: (hex: string) => string = (h) => h): number {
  let found = -1;
  ring.keys.forEach((k, i) => {
    const mine = Buffer.from(format(createHmac('sha256', k.secret).update(data).digest('hex')));
    const theirs = Buffer.from(stored);
    // every key is tried (no early exit), so the time does not say which one matched
    if (mine.length === theirs.length && timingSafeEqual(mine, theirs) && found < 0) found = i;
  });
  return found;
}
