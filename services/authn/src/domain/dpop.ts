/**
 * @module @gatehouse/authn/domain/dpop
 * DPoP, OAuth 2.0 Demonstrating Proof of Possession (RFC 9449; issue 34 §4): the check of a `DPoP`
 * proof JWT (§4.3), the RFC 7638 thumbprint that binds tokens to its key (`cnf.jkt`, §6), and the
 * server-provided nonces of §8.
 *
 * Replicas: a proof's `jti` is recorded in the store of used single-use identifiers that also refuses
 * replayed RFC 7523 client assertions (`OAuthStore.useJti`, table `authn_used_jtis`), so a proof used
 * at one authn replica is refused at every other. Nonces hold no state: a nonce is its issue time and
 * an HMAC of it under a key every replica derives from `--encryption-key` (else `--client-secret`),
 * so any replica checks a nonce another one issued.
 */
import { createHash, createHmac } from 'node:crypto';
import { EmbeddedJWK, calculateJwkThumbprint, decodeProtectedHeader, jwtVerify, type JWK } from 'jose';
import { timingSafeEqualString } from '@gatehouse/crypto';

/** RFC 9449 §5.1 / §11.3: the asymmetric JWS algorithms a proof may use (`dpop_signing_alg_values_supported`). */
export const DPOP_SIGNING_ALGS: readonly string[] = Object.freeze(['ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'EdDSA', 'Ed25519']);

/** RFC 9449 §4.3 (11): a proof's `iat` is accepted this many seconds either side of the server's clock. */
export const DPOP_IAT_WINDOW_SECONDS = 60;

/** RFC 9449 §8: a server nonce is accepted for this many seconds after it was issued. */
export const DPOP_NONCE_TTL_SECONDS = 300;

/** The header of the proof (RFC 9449 §4.1) and of a fresh nonce (§8.1). */
export const DPOP_HEADER = 'dpop';

/** Members of a private or symmetric JWK: a proof's `jwk` must have none (RFC 9449 §4.3 (7)). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** Upper bound of a proof's length in characters (an RSA-4096 key and the claims fit well within it). */
const MAX_PROOF_CHARS = 8192;

/**
 * A refused proof (RFC 9449 §5 / §7.1): `invalid_dpop_proof`, or `use_dpop_nonce` (§8) when the proof
 * lacks the server's current nonce; `nonce` is then the one to send in the `DPoP-Nonce` header.
 */
export class DPoPProofError extends Error {
  readonly error: 'invalid_dpop_proof' | 'use_dpop_nonce';
  readonly nonce: string | null;
  constructor(error: 'invalid_dpop_proof' | 'use_dpop_nonce', description: string, nonce: string | null = null) {
    super(description);
    this.error = error;
    this.nonce = nonce;
  }
}

const invalidProof = (d: string): DPoPProofError => new DPoPProofError('invalid_dpop_proof', d);

/** The HMAC key of server nonces from the deployment's shared secret (`--encryption-key`, else `--client-secret`). */
export function dpopNonceKey(secret: string): Buffer {
  return createHash('sha256').update(`gatehouse dpop-nonce|${secret}`).digest();
}

const nonceMac = (key: Buffer, issuedAt: number): string => createHmac('sha256', key).update(`dpop-nonce|${issuedAt}`).digest('base64url').slice(0, 32);

/**
 * A fresh server nonce (RFC 9449 §8): `<issued-at, base 36>.<HMAC>`, unpredictable without the key.
 * @param now Unix seconds
 */
export function issueDPoPNonce(key: Buffer, now: number): string {
  return `${now.toString(36)}.${nonceMac(key, now)}`;
}

/** Whether `nonce` was issued with `key` at most {@link DPOP_NONCE_TTL_SECONDS} before `now` (Unix seconds; 5 s of skew between replicas). */
export function dpopNonceValid(key: Buffer, nonce: string, now: number): boolean {
  const m = /^([0-9a-z]{1,12})\.([A-Za-z0-9_-]{32})$/.exec(nonce);
  if (!m) return false;
  const issuedAt = parseInt(m[1]!, 36);
  if (!Number.isSafeInteger(issuedAt) || issuedAt > now + 5 || now - issuedAt > DPOP_NONCE_TTL_SECONDS) return false;
  return timingSafeEqualString(nonceMac(key, issuedAt), m[2]!);
}

/** RFC 9449 §4.2 `ath`: BASE64URL(SHA-256(ASCII(access token))). */
export const accessTokenHash = (token: string): string => createHash('sha256').update(token, 'ascii').digest('base64url');

/** An HTTP URI without query and fragment, normalised (RFC 9449 §4.3 (9): RFC 3986 §6.2.2-§6.2.3), or null. */
function normalisedUri(uri: string): string | null {
  try {
    const u = new URL(uri);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return null;
  }
}

/** What a proof must match: the request it came with. */
export interface ProofExpectation {
  /** the request's method (`POST`, `GET`) */
  htm: string;
  /** the endpoint's URI as this server publishes it (query and fragment are ignored) */
  htu: string;
  /** the access token presented with the proof (resource requests: §4.3 (12) `ath`); absent at the token endpoint */
  accessToken?: string;
  /** Unix seconds */
  now: number;
  /** the nonce key ({@link dpopNonceKey}); every proof must carry a nonce it issued (§8) … */
  nonceKey: Buffer;
  /**
   * … unless false: a proof a resource server received and passes on (`validate_jwt_token`) was made
   * for that server, whose nonces are its own business (§8 leaves them optional at resource servers)
   */
  requireNonce?: boolean;
  /**
   * Records the proof's replay key until the instant given (Unix seconds); false when it is already
   * recorded (the storage `useJti` of RFC 7523 assertions).
   */
  useJti(key: string, expiresAt: number, now: number): Promise<boolean>;
}

/** A proof that passed: its key's RFC 7638 SHA-256 thumbprint (`jkt`) and the public key. */
export interface CheckedProof {
  jkt: string;
  jwk: JWK;
}

/**
 * Checks a DPoP proof (RFC 9449 §4.3): one well-formed JWT; header `typ: dpop+jwt`, `alg` one of
 * {@link DPOP_SIGNING_ALGS}, `jwk` a public key only, signature by that key; claims `jti`, `htm` and
 * `htu` equal to the request's, `iat` within {@link DPOP_IAT_WINDOW_SECONDS}, `ath` the hash of the
 * access token when one is presented, and a `nonce` this server issued (§8). The `jti` is recorded
 * (per key) last, so a proof refused for another reason may be corrected; a recorded one is refused.
 * @param proof the `DPoP` header's value (undefined when absent)
 * @throws DPoPProofError `invalid_dpop_proof`, or `use_dpop_nonce` with a fresh nonce
 */
export async function checkDPoPProof(proof: string | undefined, expect: ProofExpectation): Promise<CheckedProof> {
  if (proof === undefined || proof === '') throw invalidProof('a DPoP proof is required');
  if (proof.length > MAX_PROOF_CHARS || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(proof)) throw invalidProof('the DPoP header must hold one JWT');
  let header;
  try {
    header = decodeProtectedHeader(proof);
  } catch {
    throw invalidProof('the DPoP proof is not a JWT');
  }
  if (header.typ !== 'dpop+jwt') throw invalidProof('the DPoP proof\'s typ must be dpop+jwt');
  if (typeof header.alg !== 'string' || !DPOP_SIGNING_ALGS.includes(header.alg)) throw invalidProof('the DPoP proof\'s alg is not supported');
  const jwk = header.jwk as Record<string, unknown> | undefined;
  if (!jwk || typeof jwk !== 'object' || Array.isArray(jwk)) throw invalidProof('the DPoP proof must carry its public key as jwk');
  if (PRIVATE_MEMBERS.some((m) => m in jwk)) throw invalidProof('the DPoP proof\'s jwk must be a public key');
  let payload;
  try {
    ({ payload } = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: [...DPOP_SIGNING_ALGS] }));
  } catch {
    throw invalidProof('the DPoP proof\'s signature does not verify');
  }
  if (typeof payload.jti !== 'string' || payload.jti === '' || payload.jti.length > 256) throw invalidProof('the DPoP proof needs a jti');
  if (payload.htm !== expect.htm) throw invalidProof('the DPoP proof\'s htm does not match the request method');
  const htu = typeof payload.htu === 'string' ? normalisedUri(payload.htu) : null;
  if (htu === null || htu !== normalisedUri(expect.htu)) throw invalidProof('the DPoP proof\'s htu does not match the request URI');
  if (typeof payload.iat !== 'number' || !Number.isFinite(payload.iat)) throw invalidProof('the DPoP proof needs an iat');
  if (Math.abs(payload.iat - expect.now) > DPOP_IAT_WINDOW_SECONDS) throw invalidProof('the DPoP proof\'s iat is outside the accepted window');
  if (expect.accessToken !== undefined) {
    if (typeof payload.ath !== 'string' || !timingSafeEqualString(payload.ath, accessTokenHash(expect.accessToken))) {
      throw invalidProof('the DPoP proof\'s ath does not match the access token');
    }
  }
  if (expect.requireNonce !== false && (typeof payload.nonce !== 'string' || !dpopNonceValid(expect.nonceKey, payload.nonce, expect.now))) {
    throw new DPoPProofError('use_dpop_nonce', 'the authorization server requires a DPoP nonce', issueDPoPNonce(expect.nonceKey, expect.now));
  }
  const jkt = await calculateJwkThumbprint(jwk as JWK, 'sha256');
  // per key: one client's jti cannot block another's; accepted until the end of the iat window
  const replayKey = `dpop|${createHash('sha256').update(`${jkt}|${payload.jti}`).digest('base64url')}`;
  if (!(await expect.useJti(replayKey, payload.iat + DPOP_IAT_WINDOW_SECONDS, expect.now))) throw invalidProof('the DPoP proof was already used');
  return { jkt, jwk: jwk as JWK };
}

/** The RFC 7800 `cnf.jkt` of a token's claims, or null for a bearer token. */
export function boundJkt(claims: Record<string, unknown>): string | null {
  const cnf = claims.cnf as { jkt?: unknown } | undefined;
  return cnf && typeof cnf === 'object' && typeof cnf.jkt === 'string' ? cnf.jkt : null;
}
