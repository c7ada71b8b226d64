/**
 * @module @gatehouse/crypto/jwt
 * JWT signing and verification (RFC 7519, JWS RFC 7515, algorithms RFC 7518 §3) and the public
 * JWKS (RFC 7517) with jose 6. One primary key signs; an optional secondary key (the previous one,
 * behaviour.md §1.2) only verifies during a rotation.
 */
import { createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { SignJWT, decodeProtectedHeader, importJWK, jwtVerify, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { AppError } from '@gatehouse/errors';

/** The `--jwt-type` values (behaviour.md §1.3). */
export const JWT_TYPES = ['HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512'] as const;
export type JwtType = (typeof JWT_TYPES)[number];

/** The named curve each ECDSA alg requires (RFC 7518 §3.4): ES256↔P-256, ES384↔P-384, ES512↔P-521. */
const EC_CURVES: Record<string, { node: string; jwk: string }> = {
  ES256: { node: 'prime256v1', jwk: 'P-256' },
  ES384: { node: 'secp384r1', jwk: 'P-384' },
  ES512: { node: 'secp521r1', jwk: 'P-521' },
};

/** Key material of one signing key. HMAC needs `secret`; RSA/ECDSA need `privateKeyPem` (public derived if absent). */
export interface JwtKeyOptions {
  type: JwtType;
  secret?: string;
  privateKeyPem?: string;
  publicKeyPem?: string;
}

/** Options of {@link createJwtSigner}: the primary key, and the previous key for verification only. */
export interface JwtSignerOptions extends JwtKeyOptions {
  secondary?: { type: JwtType; secret?: string; publicKeyPem?: string };
}

export interface SignOptions {
  /** lifetime in seconds; `exp = iat + expiresInSeconds` */
  expiresInSeconds: number;
  /** Unix seconds used for `iat` (default: now); lets callers use one clock */
  nowSeconds?: number;
  /**
   * The JOSE `typ` header (RFC 7515 §4.1.9); default `JWT`. `at+jwt` marks an RFC 9068 §2.1 JWT
   * access token.
   */
  typ?: string;
}

export interface VerifyOptions {
  /** Unix seconds to check `exp`/`nbf` against (default: now) */
  nowSeconds?: number;
}

export interface JwtSigner {
  readonly alg: JwtType;
  /** `kid` header of tokens this signer issues */
  readonly kid: string;
  /** Signs `claims` with the primary key; sets `iat` and `exp`. Header `{alg, kid, typ}` (`typ` default `JWT`). */
  sign(claims: JWTPayload, options: SignOptions): Promise<string>;
  /**
   * Verifies the signature (primary key, then secondary), `exp` and `nbf`; claims beyond those are
   * the caller's business. A token verified before skips the signature check (see
   * {@link VERIFIED_CACHE_SIZE}), never the time checks.
   * @throws AppError `unauthenticated` `invalid token` on any failure (cause kept for logs)
   */
  verify(token: string, options?: VerifyOptions): Promise<JWTPayload>;
  /** The public JWKS: asymmetric primary and secondary public keys; HMAC keys are never published. */
  jwks(): { keys: JWK[] };
}

interface PreparedKey {
  alg: JwtType;
  kid: string;
  /** public JWK to publish, or null for HMAC */
  publicJwk: JWK | null;
  signKey: (() => Promise<CryptoKey | Uint8Array>) | null;
  verifyKey: () => Promise<CryptoKey | Uint8Array>;
}

const isHmac = (t: JwtType): boolean => t.startsWith('HS');

/** RFC 7638 thumbprint (SHA-256, base64url) computed synchronously from the required members. */
function thumbprint(jwk: JWK): string {
  const members = jwk.kty === 'RSA' ? { e: jwk.e, kty: 'RSA', n: jwk.n } : { crv: jwk.crv, kty: 'EC', x: jwk.x, y: jwk.y };
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url');
}

function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= fn());
}

function checkKeyType(key: KeyObject, type: JwtType, what: string): void {
  const family = type.startsWith('RS') ? 'RSA' : 'EC';
  const kind = key.type === 'private' ? 'private' : 'public';
  const bad = new AppError('invalid_argument', `${what} is not a valid PEM ${family} ${kind} key`);
  if (family === 'RSA' && key.asymmetricKeyType !== 'rsa') throw bad;
  if (family === 'EC') {
    if (key.asymmetricKeyType !== 'ec') throw bad;
    const curve = EC_CURVES[type];
    if (key.asymmetricKeyDetails?.namedCurve !== curve?.node) {
      throw new AppError('invalid_argument', `${what} is not a valid PEM EC ${kind} key for ${type} (needs ${curve?.jwk})`);
    }
  }
}

function prepare(o: JwtKeyOptions, role: 'primary' | 'secondary'): PreparedKey {
  if (!(JWT_TYPES as readonly string[]).includes(o.type)) {
    throw new AppError('invalid_argument', `unsupported --jwt-type: ${String(o.type)}`);
  }
  const flag = role === 'primary' ? '--jwt' : '--jwt-secondary';
  if (isHmac(o.type)) {
    if (!o.secret) throw new AppError('invalid_argument', `${flag}-secret is required for ${o.type}`);
    const raw = new TextEncoder().encode(o.secret);
    // A non-reversible id: HMAC of a fixed label under the secret, so the kid reveals nothing useful.
    const kid = createHash('sha256').update(`gatehouse-kid:${o.type}:`).update(raw).digest('base64url').slice(0, 22);
    const key = once(async () => raw as Uint8Array);
    return { alg: o.type, kid, publicJwk: null, signKey: role === 'primary' ? key : null, verifyKey: key };
  }
  let priv: KeyObject | undefined;
  let pub: KeyObject;
  if (role === 'primary') {
    if (!o.privateKeyPem) throw new AppError('invalid_argument', `--jwt-private-key and --jwt-public-key are required for ${o.type}`);
    try {
      priv = createPrivateKey({ key: o.privateKeyPem, format: 'pem' });
    } catch (err) {
      throw new AppError('invalid_argument', `--jwt-private-key is not a valid PEM ${o.type.startsWith('RS') ? 'RSA' : 'EC'} private key`, { cause: err });
    }
    checkKeyType(priv, o.type, '--jwt-private-key');
    pub = createPublicKey(priv);
  } else {
    if (!o.publicKeyPem) throw new AppError('invalid_argument', `--jwt-secondary-public-key is required for ${o.type}`);
    pub = undefined as unknown as KeyObject;
  }
  if (o.publicKeyPem) {
    let given: KeyObject;
    try {
      given = createPublicKey({ key: o.publicKeyPem, format: 'pem' });
    } catch (err) {
      throw new AppError('invalid_argument', `${flag}-public-key is not a valid PEM ${o.type.startsWith('RS') ? 'RSA' : 'EC'} public key`, { cause: err });
    }
    checkKeyType(given, o.type, `${flag}-public-key`);
    if (priv && !given.equals(pub)) throw new AppError('invalid_argument', '--jwt-public-key does not match --jwt-private-key');
    pub = given;
  }
  const publicJwk = pub.export({ format: 'jwk' }) as JWK;
  const kid = thumbprint(publicJwk);
  const published: JWK = { ...publicJwk, kid, alg: o.type, use: 'sig' };
  const privJwk = priv ? (priv.export({ format: 'jwk' }) as JWK) : null;
  return {
    alg: o.type,
    kid,
    publicJwk: published,
    signKey: privJwk ? once(() => importJWK(privJwk, o.type) as Promise<CryptoKey>) : null,
    verifyKey: once(() => importJWK(publicJwk, o.type) as Promise<CryptoKey>),
  };
}

/**
 * How many verified tokens {@link JwtSigner.verify} remembers. A token string that verified once
 * verifies again with the same keys, so a repeat skips the signature (the costly part: an HMAC or
 * RSA/ECDSA operation through WebCrypto per request); `exp` and `nbf` are still checked on every use.
 * A signer's keys never change (rotation is a restart with new flags), so entries need no
 * invalidation; the oldest is dropped past this size (~1 KiB each).
 */
export const VERIFIED_CACHE_SIZE = 4096;

/** `exp` and `nbf` against `now` (Unix seconds), with jose's rules and no clock tolerance. */
function timeClaimsHold(claims: JWTPayload, now: number): boolean {
  if (typeof claims.exp === 'number' && claims.exp <= now) return false;
  if (typeof claims.nbf === 'number' && claims.nbf > now) return false;
  return true;
}

/**
 * Builds the signer from the `--jwt-*` flags. Keys are validated here (pair match, curve per alg)
 * and imported once, on first use.
 *
 * @throws AppError `invalid_argument` with the startup messages of behaviour.md §1.4
 *   (`--jwt-secret is required for HS256`, `--jwt-private-key is not a valid PEM RSA private key`,
 *   `--jwt-public-key does not match --jwt-private-key`, ...)
 */
export function createJwtSigner(options: JwtSignerOptions): JwtSigner {
  const primary = prepare(options, 'primary');
  const secondary = options.secondary ? prepare(options.secondary, 'secondary') : null;
  const verifiers = secondary ? [primary, secondary] : [primary];
  const signKey = primary.signKey!;
  /** token → claims of tokens whose signature verified with this signer's keys, oldest first */
  const verified = new Map<string, JWTPayload>();
  return {
    alg: primary.alg,
    kid: primary.kid,
    async sign(claims, { expiresInSeconds, nowSeconds, typ = 'JWT' }) {
      const iat = nowSeconds ?? Math.floor(Date.now() / 1000);
      return new SignJWT({ ...claims, iat, exp: iat + expiresInSeconds })
        .setProtectedHeader({ alg: primary.alg, kid: primary.kid, typ })
        .sign(await signKey());
    },
    async verify(token, opts = {}) {
      const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
      const known = typeof token === 'string' ? verified.get(token) : undefined;
      if (known !== undefined) {
        // the signature was verified before; the time claims are checked on every use (RFC 7519 §4.1.4, §4.1.5)
        if (!timeClaimsHold(known, now)) throw new AppError('unauthenticated', 'invalid token', { reason: 'jwt_invalid' });
        return { ...known };
      }
      let header: { kid?: string; alg?: string };
      try {
        if (typeof token !== 'string') throw new Error('token is not a string');
        header = decodeProtectedHeader(token);
      } catch (err) {
        throw new AppError('unauthenticated', 'invalid token', { cause: err, reason: 'jwt_malformed' });
      }
      // Prefer the key the header names; otherwise try primary then secondary.
      const named = verifiers.filter((k) => k.kid === header.kid);
      const order = named.length > 0 ? named : verifiers;
      let last: unknown;
      for (const k of order) {
        if (header.alg !== k.alg) continue;
        try {
          const { payload } = await jwtVerify(token, await k.verifyKey(), {
            algorithms: [k.alg],
            currentDate: new Date(now * 1000),
          });
          if (verified.size >= VERIFIED_CACHE_SIZE) verified.delete(verified.keys().next().value!);
          verified.set(token, { ...payload });
          return payload;
        } catch (err) {
          last = err;
          // a time-claim failure is final; only a signature mismatch moves on to the next key
          if ((err as { code?: string }).code !== 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') break;
        }
      }
      throw new AppError('unauthenticated', 'invalid token', { cause: last, reason: 'jwt_invalid' });
    },
    jwks() {
      return { keys: verifiers.flatMap((k) => (k.publicJwk ? [{ ...k.publicJwk }] : [])) };
    },
  };
}

export type { JWK, JWTPayload } from 'jose';
