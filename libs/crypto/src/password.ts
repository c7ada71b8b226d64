/**
 * @module @gatehouse/crypto/password
 * Password hashing: argon2id with the parameters of behaviour.md §3.1 (OWASP Password Storage
 * Cheat Sheet, "m=19456 (19 MiB), t=2, p=1"), stored as a PHC string (RFC 9106 encoding).
 *
 * Implementation: @node-rs/argon2. `npx node test/bench/password-bench.ts` measured it at 2-3x less
 * CPU per hash and per verify than the `argon2` package at these parameters on this machine
 * (TOOLCHAIN.md asked for the measurement); both read each other's PHC strings.
 */
import { hash as argon2Hash, parseOptions, verify as argon2Verify } from '@node-rs/argon2';
import { randomBytes } from 'node:crypto';
import { verifyBcrypt } from './bcrypt.ts';

/** `Algorithm.Argon2id` of @node-rs/argon2 (a const enum, so its value is spelled out here). */
const ARGON2ID = 2;

/** argon2id parameters (behaviour.md §3.1). memoryCost is in KiB, outputLen in bytes. */
export const ARGON2_PARAMS = Object.freeze({
  algorithm: ARGON2ID,
  memoryCost: 19456,
  timeCost: 2,
  parallelism: 1,
  outputLen: 32,
});

/** salt length in bytes (behaviour.md §3.1) */
const SALT_BYTES = 16;

/** Result of {@link verifyPassword}. */
export interface PasswordCheck {
  /** true when the password matches the stored hash */
  ok: boolean;
  /** true when `ok` and the hash is not argon2id with the current parameters (re-hash in the same request) */
  needsRehash: boolean;
}

/**
 * Hashes a password with argon2id (behaviour.md §3.1). The password is used as given: never
 * trimmed or normalised (behaviour.md §0.1).
 *
 * @returns a PHC string `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`
 */
export async function hashPassword(password: string): Promise<string> {
  return argon2Hash(password, { ...ARGON2_PARAMS, salt: randomBytes(SALT_BYTES) });
}

/** True for the bcrypt PHC-like prefixes `$2a$`, `$2b$`, `$2y$`. */
export function isBcryptHash(hash: string): boolean {
  return /^\$2[aby]\$\d\d\$/.test(hash);
}

/**
 * Verifies a password against a stored hash.
 *
 * - argon2 (any variant or parameters) verifies; `needsRehash` is true when it is not argon2id
 *   with {@link ARGON2_PARAMS}.
 * - bcrypt (`$2a$`/`$2b$`/`$2y$`, legacy databases, cost 4–16) verifies through bcrypt.ts, on
 *   libuv's thread pool; a match always has `needsRehash: true` (behaviour.md §3.1: re-hash to
 *   argon2id in the same request).
 * - Anything else (empty, malformed): `{ ok: false }`, never throws.
 */
export async function verifyPassword(hash: string, password: string): Promise<PasswordCheck> {
  if (typeof hash === 'string' && isBcryptHash(hash)) {
    return (await verifyBcrypt(hash, password)) ? { ok: true, needsRehash: true } : { ok: false, needsRehash: false };
  }
  if (typeof hash !== 'string' || !hash.startsWith('$argon2')) {
    await dummyVerify(password);
    return { ok: false, needsRehash: false };
  }
  let ok: boolean;
  try {
    ok = await argon2Verify(hash, password);
  } catch {
    return { ok: false, needsRehash: false };
  }
  if (!ok) return { ok: false, needsRehash: false };
  let needsRehash: boolean;
  try {
    const used = parseOptions(hash);
    needsRehash = !hash.startsWith('$argon2id$') || used.memoryCost !== ARGON2_PARAMS.memoryCost
      || used.timeCost !== ARGON2_PARAMS.timeCost || used.parallelism !== ARGON2_PARAMS.parallelism
      || used.outputLen !== ARGON2_PARAMS.outputLen;
  } catch {
    needsRehash = true;
  }
  return { ok: true, needsRehash };
}

let dummyHash: Promise<string> | undefined;

/**
 * Performs one argon2id verification against a fixed hash so that a login for an unknown account
 * costs the same time as one for a known account (behaviour.md §3.1). Always resolves.
 */
export async function dummyVerify(password = 'dummy-password'): Promise<void> {
  dummyHash ??= hashPassword('gatehouse-dummy-password-never-matches');
  try {
    await argon2Verify(await dummyHash, password);
  } catch {
    // constant work only; the result is irrelevant
  }
}
