/**
 * @module @gatehouse/authn/domain/validate
 * `validate_jwt_token` and `validate_session` (behaviour.md §3.5). No credentials needed;
 * failures are errors, never `is_valid: false`.
 */
import { AppError } from '@gatehouse/errors';
import { sha256Hex, type JWTPayload } from '@gatehouse/crypto';
import type { UserRecord } from '../storage/ports.ts';
import type { AuthnContext } from './deps.ts';
import { DPoPProofError, boundJkt, checkDPoPProof, dpopNonceKey } from './dpop.ts';
import { assertRelations } from './relations.ts';
import { isRevoked } from './user.ts';
import { normaliseList, optText, requiredRelations, type Opt, type RelationInput } from './validation.ts';

const TOKEN_TYPES = ['access_token', 'refresh_token', 'id_token'];
const invalidToken = (cause?: unknown) => new AppError('unauthenticated', 'invalid token', cause === undefined ? {} : { cause });
const unauthorized = () => new AppError('unauthenticated', 'unauthorized');

/** A token to validate, and what its holder must have. */
export interface TokenQuery {
  /** `access_token`, `refresh_token` or `id_token` */
  tokenType: Opt<string>;
  /** the compact JWS */
  token: Opt<string>;
  /** roles the token's role claim must all hold */
  roles: readonly string[];
  requiredRelations: readonly RelationInput[];
  /**
   * issue 34 §4: the DPoP proof the resource server received with the token (RFC 9449 §7.1), and the
   * method and URL of the request it came with; required for a DPoP-bound access token (`cnf.jkt`)
   */
  dpop?: { proof: Opt<string>; method: Opt<string>; url: Opt<string> };
}

/** A session cookie value to validate, and what its session must have. */
export interface SessionCookieQuery {
  /** the `cookie_session` value (percent-encoded or not) */
  cookie: Opt<string>;
  /** roles the session must all hold */
  roles: readonly string[];
  requiredRelations: readonly RelationInput[];
}

/**
 * The user exists and is neither revoked nor deactivated (behaviour.md §2.1). Not `async`: the
 * activity check's own promise is returned, with no layer of its own on the validation hot path.
 */
function isActive(c: AuthnContext, userId: string): Promise<boolean> {
  if (c.activity) return c.activity.isActive(userId);
  return c.users.findById(userId).then((user) => user !== null && !isRevoked(user));
}

/**
 * Validates a token (behaviour.md §3.5): its signature (primary or secondary key), `exp`, `iss` =
 * `--url` and `token_type`; for access and refresh tokens also a live session that belongs to `sub`
 * (for a refresh token, the session's current one) and an active user; then the requested roles
 * against the role claim (`--jwt-role-claim`, else `roles`) and `required_relations` (§7.4). A
 * DPoP-bound access token also needs the resource server's proof (issue 34 §4, RFC 9449 §7.1).
 *
 * The benchmarked hot path (`npm run bench`): `answer` turns the verified claims into the caller's
 * answer as the last step, so the transport returns this promise as it is, with no layer of its own.
 * @returns what `answer` makes of the verified claims
 * @throws AppError `invalid_argument` `invalid token type` or a field over its length;
 *   `unauthenticated` `invalid token`, `unauthorized` (a role missing); relations as assertRelations
 */
export async function validateJwtToken<R>(c: AuthnContext, q: TokenQuery, answer: (claims: JWTPayload) => R): Promise<R> {
  const tokenType = optText('token_type', q.tokenType);
  const token = optText('token', q.token, 16384);
  const roles = normaliseList('roles', q.roles);
  const relations = requiredRelations(q.requiredRelations);
  if (!tokenType || !TOKEN_TYPES.includes(tokenType)) throw new AppError('invalid_argument', 'invalid token type');
  if (!token) throw invalidToken();
  let claims: JWTPayload;
  try {
    claims = await c.jwt.verify(token, { nowSeconds: c.now() });
  } catch (err) {
    throw invalidToken(err);
  }
  if (claims.iss !== c.options.url || claims.token_type !== tokenType || typeof claims.sub !== 'string') throw invalidToken();
  if (tokenType !== 'id_token') {
    // access and refresh tokens are valid only while their session lives (behaviour.md §2.1)
    const session = typeof claims.nonce === 'string' ? await c.sessions.get(claims.nonce) : null;
    if (!session || session.userId !== claims.sub) throw invalidToken();
    if (tokenType === 'refresh_token' && session.refreshTokenId !== claims.jti) throw invalidToken();
    if (!(await isActive(c, claims.sub))) throw invalidToken();
  }
  // the hot path pays nothing for a bearer token validated without a proof
  if (tokenType === 'access_token' && (claims.cnf !== undefined || q.dpop !== undefined)) await checkResourceProof(c, token, claims, q.dpop);
  if (roles) {
    const claim = claims[c.options.jwtRoleClaim] ?? claims.roles;
    const held = Array.isArray(claim) ? claim : [];
    if (roles.some((r) => !held.includes(r))) throw unauthorized();
  }
  if (relations.length > 0) await assertRelations(c, claims.sub, relations);
  return answer(claims);
}

/**
 * RFC 9449 §7.1 for a resource server that asks: a DPoP-bound access token (`cnf.jkt`) is valid only
 * with a proof by its key for the request it came with (`htm`, `htu`, `ath` the token's hash, `iat`
 * within 60 s, a `jti` used once; a nonce is not required, the proof was made for the resource server),
 * and a proof sent with a bearer token refuses it (§7.2: the DPoP scheme needs a bound token).
 * @throws AppError `invalid_argument` for a proof without `dpop_method` / `dpop_url`; `unauthenticated`
 *   `invalid token` (no proof for a bound token, another key, a bearer token) or `invalid DPoP proof: <why>`
 */
async function checkResourceProof(c: AuthnContext, token: string, claims: JWTPayload, dpop: TokenQuery['dpop']): Promise<void> {
  const jkt = boundJkt(claims);
  const proof = optText('dpop_proof', dpop?.proof, 8192);
  if (!proof) {
    if (jkt !== null) throw new AppError('unauthenticated', 'invalid token: a DPoP-bound token needs its DPoP proof (dpop_proof, dpop_method, dpop_url)');
    return;
  }
  const method = optText('dpop_method', dpop?.method, 16);
  const url = optText('dpop_url', dpop?.url);
  if (!method || !url || !/^https?:\/\//i.test(url)) throw new AppError('invalid_argument', 'dpop_method and an absolute http(s) dpop_url are required with dpop_proof');
  if (jkt === null) throw new AppError('unauthenticated', 'invalid token: the token is not DPoP-bound');
  let checked;
  try {
    checked = await checkDPoPProof(proof, {
      htm: method.toUpperCase(), htu: url, accessToken: token, now: c.now(), requireNonce: false,
      nonceKey: dpopNonceKey(c.options.encryptionKey || c.options.clientSecret), useJti: (key, until, now) => c.oauth.useJti(key, until, now),
    });
  } catch (err) {
    if (err instanceof DPoPProofError) throw new AppError('unauthenticated', `invalid DPoP proof: ${err.message}`);
    throw err;
  }
  if (checked.jkt !== jkt) throw new AppError('unauthenticated', 'invalid token: the DPoP proof is signed by another key than the token is bound to');
}

/**
 * Validates a session cookie value (behaviour.md §3.5): a live, unexpired session of an active user
 * holding every requested role, then `required_relations` (§7.4).
 * @returns the session's user
 * @throws AppError `unauthenticated` `unauthorized`; `invalid_argument` for a field over its length
 *   or a bad relation; relations as assertRelations
 */
export async function validateSession(c: AuthnContext, q: SessionCookieQuery): Promise<UserRecord> {
  let cookie = optText('cookie', q.cookie, 4096)?.trim();
  const roles = normaliseList('roles', q.roles);
  const relations = requiredRelations(q.requiredRelations);
  if (!cookie) throw unauthorized();
  try {
    cookie = decodeURIComponent(cookie);
  } catch {
    // use as given
  }
  const session = await c.sessions.findByHandleHash(sha256Hex(cookie));
  if (!session || session.expiresAt <= c.now()) throw unauthorized();
  const user = await c.users.findById(session.userId);
  if (!user || isRevoked(user)) throw unauthorized();
  if (roles && roles.some((r) => !session.roles.includes(r))) throw unauthorized();
  if (relations.length > 0) await assertRelations(c, user.id, relations);
  return user;
}
