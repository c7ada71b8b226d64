/**
 * @module @gatehouse/crypto
 * argon2id passwords, JWT + JWKS (jose), AES-256-GCM for secrets at rest, random tokens (ARCHITECTURE §5).
 */
export { BCRYPT_MAX_COST, verifyBcrypt } from './bcrypt.ts';
export { ARGON2_PARAMS, dummyVerify, hashPassword, isBcryptHash, verifyPassword, type PasswordCheck } from './password.ts';
export { JWT_TYPES, createJwtSigner, type JwtKeyOptions, type JwtSigner, type JwtSignerOptions, type JwtType, type SignOptions, type VerifyOptions, type JWK, type JWTPayload } from './jwt.ts';
export { atHash, hashOfAlg, hmacSha256Hex, randomToken, sha256Hex, timingSafeEqualString } from './random.ts';
export { decrypt, deriveEncryptionKey, encrypt, jobSealKey, jobSecretAad, needsReseal, openJobSecret, reseal, SEALED_JOB_FIELDS, sealJobSecret } from './aead.ts';
export { isKeyRing, keyRing, keyTexts, macHex, matchMac, ringOf, type KeyRing, type RingKey } from './keyring.ts';
