/**
 * @module @gatehouse/authn/domain/validate
 * `validate_jwt_token` and `validate_session` (behaviour.md §3.5). No credentials needed;
 * failures are errors, never `is_valid: false`.
 */
import { AppError } from '@gatehouse/errors';
import { sha256Hex, type JWTPayload } from '@gatehouse/crypto';
import type { UserRecord } from '../storage/ports.ts';
import type { AuthnContext } from './deps.ts';
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
 * against the role claim (`--jwt-role-claim`, else `roles`) and `required_relations` (§7.4).
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
  if (roles) {
    const claim = claims[c.options.jwtRoleClaim] ?? claims.roles;
    const held = Array.isArray(claim) ? claim : [];
    if (roles.some((r) => !held.includes(r))) throw unauthorized();
  }
  if (relations.length > 0) await assertRelations(c, claims.sub, relations);
  return answer(claims);
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
