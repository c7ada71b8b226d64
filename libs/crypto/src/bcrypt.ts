/**
 * @module @gatehouse/crypto/bcrypt
 * bcrypt verification for legacy hashes (`$2a$`, `$2b$`, `$2y$`; Provos & Mazières 1999, OpenBSD
 * bcrypt.c) through @node-rs/bcrypt (Rust, N-API). Its `verify` runs EksBlowfish on libuv's
 * thread pool, so a cost-10 check (~50 ms of CPU) no longer blocks the event loop as the former
 * hand-written TypeScript Blowfish did. Only verification exists: new hashes are argon2id
 * (behaviour.md §3.1).
 *
 * Version 1.10.8 is pinned: 2.x lacks most of its platform packages in the registry these
 * machines use, so `npm ci` would refuse the lockfile (.ci/check-optional-deps.mjs).
 */
import { verify } from '@node-rs/bcrypt';

/**
 * The modular-crypt form this module accepts: `$2<a|b|y>$<cost, 2 digits>$<22-char salt><31-char
 * hash>` in bcrypt's base64 alphabet. `$2x$` (crypt_blowfish's sign-extension bug, which the
 * library would check with the correct algorithm) and spellings the library tolerates but the
 * standard does not (a one-digit or `+4` cost) are refused before any work is queued.
 */
const HASH_RE = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/;
/** Highest cost accepted: 2^16 rounds (about 3 s of one pool thread); anything above is treated as not verifiable. */
export const BCRYPT_MAX_COST = 16;

/**
 * Verifies `password` against a legacy bcrypt hash, off the event loop.
 *
 * `$2a$`, `$2b$` and `$2y$` are the same computation for passwords under 256 bytes (`$2y$` is
 * PHP's name for `$2b$`), and @node-rs/bcrypt accepts all three as stored. The password is
 * encoded as UTF-8 and, as bcrypt defines, only its first 72 bytes count (the key is the bytes
 * plus a terminating NUL, cut at 72).
 *
 * @param hash the stored 60-character string, e.g. `$2b$10$N9qo8uLOickgx2ZMRZoMye…`
 * @param password the password as typed, never trimmed or normalised (behaviour.md §0.1)
 * @returns true on a match; false on a mismatch, a malformed hash, or a cost outside
 *   4–{@link BCRYPT_MAX_COST}. Never rejects.
 */
export async function verifyBcrypt(hash: string, password: string): Promise<boolean> {
  const m = typeof hash === 'string' ? HASH_RE.exec(hash) : null;
  if (!m) return false;
  const cost = Number(m[1]);
  if (cost < 4 || cost > BCRYPT_MAX_COST) return false;
  try {
    return await verify(password, hash);
  } catch {
    // the library throws for arguments it cannot read (a non-string password); the contract is "no match"
    return false;
  }
}
